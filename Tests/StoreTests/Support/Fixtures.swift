import Foundation

@testable import Store

enum Fixtures {
    static func framework(_ id: String, name: String? = nil) -> Framework {
        Framework(
            id: id, name: name ?? "Name of \(id)", imageName: id,
            urlString: "https://developer.apple.com/\(id)", description: "About \(id).")
    }

    /// A time the store keeps exactly (whole milliseconds).
    static func time(_ text: String) -> Date {
        guard let date = Timestamp.parse(text) else { preconditionFailure("not a timestamp: \(text)") }
        return date
    }

    static func money(_ text: String) -> Money {
        guard let money = Money(text) else { preconditionFailure("not money: \(text)") }
        return money
    }

    static func date(_ text: String) -> CalendarDate {
        guard let date = CalendarDate(text) else { preconditionFailure("not a date: \(text)") }
        return date
    }

    static func month(_ text: String) -> YearMonth {
        guard let month = YearMonth(text) else { preconditionFailure("not a month: \(text)") }
        return month
    }

    static func order(_ id: String, placedAt: String = "2026-11-20T09:30:00.250Z", prices: [String]) -> Order {
        Order(
            id: id, placedAt: time(placedAt),
            items: prices.enumerated().map { index, price in
                OrderItem(itemName: "Item \(index) of \(id)", price: money(price), aisle: index, quantity: 1)
            })
    }

    /// The root of the package, found from this file's path.
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath) // Tests/StoreTests/Support/Fixtures.swift
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The 16 real Apple frameworks of `Examples/apple-frameworks.json` (feed format v1).
    static func appleFrameworks() throws -> [Framework] {
        struct Feed: Decodable { let frameworks: [Framework] }
        let data = try Data(contentsOf: packageRoot.appendingPathComponent("Examples/apple-frameworks.json"))
        return try JSONDecoder().decode(Feed.self, from: data).frameworks
    }
}

extension Database {
    /// The single integer a query like `SELECT count(*) ...` returns.
    func integer(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64? {
        try fetchOne(sql, arguments)?[0].integerValue
    }
}
