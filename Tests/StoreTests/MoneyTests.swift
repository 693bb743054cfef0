import Foundation
import Testing

@testable import Store

@Suite("Money")
struct MoneyTests {
    @Test(arguments: [
        ("2.49", Int64(249)), ("3", 300), ("0.1", 10), ("0.10", 10), ("0.100", 10), ("1e2", 10_000),
        ("1E2", 10_000), ("1e+2", 10_000), ("1.5e1", 1_500), ("25e-2", 25), ("-0", 0), ("-0.00", 0),
        ("0", 0), ("1234567.89", 123_456_789),
        // Any zero is zero: these were refused as "not an amount", though -0 and 0e999 were not.
        ("-0.0e0", 0), ("0e1000", 0), ("0.00e-99999", 0), ("-0e5", 0),
    ])
    func parsesExactDecimalsIntoCents(text: String, cents: Int64) {
        #expect(Money(text)?.minorUnits == cents)
    }

    @Test(arguments: [
        "0.125", "-1", "-0.01", "abc", "1e999", "", "-", "1e", "1.2.3", "2,49", " 1", "1 ",
        "92233720368547758.08", "1e-3", "1e++2", "1e+-2", "1e-+2", "1e--2", "1e+", "1e2.0",
        "-1e999", "-0.01e0", "e5", ".e1000", "0e", "-0e", "--0", "1e-1000",
    ])
    func refusesAnythingButANonNegativeAmountInWholeCents(text: String) {
        #expect(Money(text) == nil)
    }

    @Test func addsPointOneAndPointTwoToExactlyPointThree() throws {
        let sum = try #require(Money("0.1")) + #require(Money("0.2"))
        #expect(sum == Money("0.30"))
        #expect(sum.description == "0.30")
        #expect(sum.minorUnits == 30)
    }

    @Test(arguments: [
        (Int64(0), "0.00"), (5, "0.05"), (30, "0.30"), (249, "2.49"), (300, "3.00"),
        (123_456_789, "1234567.89"), (-5, "-0.05"), (-250, "-2.50"),
    ])
    func describesAlwaysWithTwoFractionDigits(cents: Int64, text: String) {
        #expect(Money(minorUnits: cents).description == text)
    }

    @Test func descriptionParsesBackToTheSameAmount() {
        for cents in stride(from: Int64(0), through: 100_000, by: 37) {
            let money = Money(minorUnits: cents)
            #expect(Money(money.description) == money)
        }
    }

    @Test func multipliesByQuantityExactly() throws {
        let price = try #require(Money("0.10"))
        #expect(price * 3 == Money("0.30"))
        #expect((0..<10).reduce(Money.zero) { total, _ in total + price } == Money("1"))
    }

    @Test func convertsToAnExactDecimal() throws {
        #expect(try #require(Money("2.49")).decimal == Decimal(string: "2.49"))
    }

    @Test func survivesAJSONRoundTrip() throws {
        let amounts = try ["2.49", "0.30", "3", "0.01", "1234567.89", "0"].map { try #require(Money($0)) }
        let data = try JSONEncoder().encode(amounts)
        #expect(try JSONDecoder().decode([Money].self, from: data) == amounts)
    }

    @Test func encodesAsAJSONNumber() throws {
        let data = try JSONEncoder().encode([Money(minorUnits: 249)])
        #expect(String(decoding: data, as: UTF8.self) == "[2.49]")
    }

    @Test func decodesJSONNumbersExactly() throws {
        let decoded = try JSONDecoder().decode([Money].self, from: Data("[2.49, 0.1, 0.2, 3, 1e2]".utf8))
        #expect(decoded.map(\.minorUnits) == [249, 10, 20, 300, 10_000])
    }

    /// What it encodes, it decodes: a negative amount encoded, then failed to decode. (The
    /// store refuses negative prices where an order is stored, not here.)
    @Test func decodesWhatItEncodesNegativeIncluded() throws {
        let amounts = [Money(minorUnits: -5), Money(minorUnits: -12_345), Money(minorUnits: 7)]
        #expect(try JSONDecoder().decode([Money].self, from: try JSONEncoder().encode(amounts)) == amounts)
    }

    /// `Int64.min` cents encoded as -92233720368547758.08, then failed to decode ("more cents
    /// than 64 bits hold"): its magnitude is one more than `Int64.max`.
    @Test func decodesEveryInt64OfCentsIncludingTheMinimum() throws {
        let amounts = [Money(minorUnits: .min), Money(minorUnits: .min + 1), Money(minorUnits: .max)]
        let data = try JSONEncoder().encode(amounts)
        #expect(String(decoding: data, as: UTF8.self).contains("-92233720368547758.08"))
        #expect(try JSONDecoder().decode([Money].self, from: data) == amounts)
        // One cent past either end is still too large; the text form stays non-negative only.
        for json in ["-92233720368547758.09", "92233720368547758.08"] {
            #expect(throws: DecodingError.self, "\(json)") { try JSONDecoder().decode(Money.self, from: Data(json.utf8)) }
        }
        #expect(Money("92233720368547758.08") == nil)
        #expect(Money.parseAmount("-92233720368547758.08") == .invalid)
    }

    /// Too large or finer than a cent was decided from the exponent's sign once it reached 1000:
    /// 10^-501 was "too large", 10^500 "at most 2 fraction digits". The value decides.
    @Test func anExponentOfAThousandOrMoreIsJudgedByTheValue() {
        let zeros = String(repeating: "0", count: 1_500)
        #expect(Money.parseAmount("0.\(zeros)1e1000") == .invalid) // 10^-501
        #expect(Money.parseAmount("1\(zeros)e-1000") == .tooLarge) // 10^500
        #expect(Money.parseAmount("1\(zeros)e-1498") == .cents(10_000)) // 100
        #expect(Money.parseAmount("0.\(zeros)1e1503") == .cents(10_000)) // 100
        #expect(Money.parseAmount("0.\(zeros)1e1499") == .cents(1)) // 0.01
        #expect(Money.parseAmount("0.\(zeros)1e1498") == .invalid) // 0.001
        #expect(Money.parseAmount("1e99999999999999999999999") == .tooLarge)
        #expect(Money.parseAmount("1e-99999999999999999999999") == .invalid)
        #expect(Money.parseAmount("0e99999999999999999999999") == .cents(0))
    }

    /// The feed's messages for such prices say what they are, and stay short.
    @Test func aFeedNamesAFarShiftedPriceForWhatItIs() throws {
        let zeros = String(repeating: "0", count: 1_500)
        let item = { (price: String) in #"{"itemName":"a","price":\#(price),"aisle":1}"# }
        let feed =
            #"{"version":1,"orders":[{"id":"o","placedAt":"2026-01-01T00:00:00Z","items":["#
            + item("0.\(zeros)1e1000") + "," + item("1\(zeros)e-1000") + "]}]}"
        do {
            _ = try Feed.decode(Data(feed.utf8))
            Issue.record("decoded")
        } catch let error as FeedValidationError {
            let problems = error.problems.map { "\($0.path): \($0.message)" }
            #expect(problems.count == 2, "\(problems)")
            #expect(problems.first?.hasPrefix("orders[0].items[0].price: ") == true, "\(problems)")
            #expect(problems.first?.contains("is not an amount of money") == true, "\(problems)")
            #expect(problems.last?.hasPrefix("orders[0].items[1].price: ") == true, "\(problems)")
            #expect(problems.last?.contains("is too large") == true, "\(problems)")
            #expect(problems.allSatisfy { $0.utf8.count < 200 }, "\(problems)")
        }
    }

    @Test(arguments: ["[0.125]", "[-0.125]", "[\"2.49\"]"])
    func refusesToDecodeAnythingButAnAmountInWholeCents(json: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([Money].self, from: Data(json.utf8))
        }
    }

    @Test func ordersByAmount() throws {
        let amounts = try ["3", "0.30", "2.49", "0"].map { try #require(Money($0)) }
        #expect(amounts.sorted().map(\.description) == ["0.00", "0.30", "2.49", "3.00"])
    }

    /// The fast path for plain decimals (`plainCents`) must read every text it takes exactly as
    /// the general parser does, and leave it every text it cannot take: texts of the shapes
    /// around its edges (leading zeros, 15 and 16 digits, more than Int64 holds, 0 to 3 fraction
    /// digits, a bare point, signs, exponents), random and fixed.
    @Test func fastPathAgreesWithTheGeneralParser() {
        var generator = SystemRandomNumberGenerator()
        func digits(_ count: Int) -> String {
            String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
        }
        var texts = [
            "0", "00", "007", "0.5", "0.05", "12.", ".5", "1.234", "999999999999999", "999999999999999.99",
            "9999999999999999", "92233720368547758.07", "-1", "+1", "1e2", "1.2e1", "1..2", "1.-2", "١٢", "",
            // Past Int64 while reading the integer digits (a fuzzer's input trapped here once).
            "9223372036854775808", "26666666666666666666666.49", String(repeating: "9", count: 40) + ".99",
        ]
        for _ in 0..<5_000 {
            let integer = digits(Int.random(in: 0...40, using: &generator))
            let fraction = Int.random(in: -1...3, using: &generator)
            texts.append(fraction < 0 ? integer : integer + "." + digits(fraction))
        }
        for text in texts {
            let fast = Money.plainCents(text)
            if let fast { #expect(Money.parseAnyAmount(text) == .cents(fast), "\(text.debugDescription)") }
            #expect(Money.parseAmount(text) == Money.parseAnyAmount(text), "\(text.debugDescription)")
        }
        // It does take the common shapes.
        #expect(Money.plainCents("2.49") == 249 && Money.plainCents("12") == 1_200 && Money.plainCents("0.5") == 50)
    }

    /// The decoder's message said "at most 2 fraction digits" for a number that was only too large.
    @Test("decoding tells an amount too large for 64-bit cents from one with more than two decimals")
    func decodingErrorsSayWhy() throws {
        for (json, reason) in [
            ("9223372036854775807", "more cents than 64 bits hold"), ("99999999999999999999.99", "more cents than 64 bits hold"),
            ("0.125", "at most 2 fraction digits"),
        ] {
            do {
                _ = try JSONDecoder().decode(Money.self, from: Data(json.utf8))
                Issue.record("\(json) decoded")
            } catch let DecodingError.dataCorrupted(context) {
                #expect(context.debugDescription.contains(reason), "\(json): \(context.debugDescription)")
            }
        }
        #expect(try JSONDecoder().decode(Money.self, from: Data("-2.5".utf8)) == Money(minorUnits: -250))
    }
}
