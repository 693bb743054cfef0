/// A plain-text table: a header row, a rule, and left-aligned columns sized to their widest cell,
/// measured in terminal columns (`displayWidth`). Cells are escaped (`Output.escaped`).
///
/// Held whole (`append`, then `render`), or streamed for rows too many to hold: `measure` every
/// row, then write `heading` and each row's `line`, the rows given again in the same order.
struct Table: Sendable {
    let headers: [String]
    private(set) var rows: [[String]] = []
    /// Columns to align right (numbers, money).
    let rightAligned: Set<Int>
    /// Columns never cut: a record's key, which a user copies into `show` or `delete`.
    let whole: Set<Int>
    /// The most terminal columns a cell of another column may take before it is cut with an
    /// ellipsis (`--json` has every value whole).
    static let maximumCellWidth = 48
    /// Each column's width so far: its widest cell among the headers and the rows measured.
    private(set) var widths: [Int]

    init(_ headers: String..., rightAligned: Set<Int> = [], whole: Set<Int> = []) {
        self.headers = headers
        self.rightAligned = rightAligned
        self.whole = whole
        widths = headers.map { Self.clip($0).width }
    }

    /// Adds a row, kept until `render`.
    mutating func append(_ row: String...) {
        rows.append(row)
        measure(row)
    }

    /// Widens the columns to fit `row`, without keeping it.
    mutating func measure(_ row: [String]) {
        for (index, cell) in row.enumerated() {
            widths[index] = max(widths[index], Self.clip(cell, whole: whole.contains(index)).width)
        }
    }

    /// The header row and the rule under it.
    var heading: TerminalText {
        TerminalText(lines: [
            line(headers), TerminalText(escaped: widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")),
        ])
    }

    /// One row laid out in the columns measured so far. Every cell is escaped: one line per
    /// row, whatever newlines a value holds.
    func line(_ row: [String]) -> TerminalText {
        let text = row.enumerated().map { index, cell in
            let (text, width) = Self.clip(cell, whole: whole.contains(index))
            let padding = String(repeating: " ", count: max(0, widths[index] - width))
            return rightAligned.contains(index) ? padding + text : text + padding
        }.joined(separator: "  ").replacingTrailingSpaces()
        return TerminalText(escaped: text)
    }

    /// The whole table: heading and the rows appended.
    func render() -> TerminalText {
        TerminalText(lines: [heading] + rows.map(line))
    }

    /// The cell escaped, cut to `maximumCellWidth` columns unless `whole`, and its width.
    private static func clip(_ text: String, whole: Bool = false) -> (text: String, width: Int) {
        let escaped = Output.escaped(text)
        let width = displayWidth(escaped)
        guard width > maximumCellWidth, !whole else { return (escaped, width) }
        var clipped = "", clippedWidth = 0
        for character in escaped {
            let characterWidth = displayWidth(character)
            if clippedWidth + characterWidth > maximumCellWidth - 1 { break }
            clipped.append(character)
            clippedWidth += characterWidth
        }
        return (clipped + "…", clippedWidth + 1)
    }
}

/// How many terminal columns `text` takes: the sum of its characters' widths.
func displayWidth(_ text: String) -> Int {
    text.allSatisfy(\.isASCII) ? text.utf8.count : text.reduce(0) { $0 + displayWidth($1) }
}

/// How many terminal columns one character (a grapheme cluster) takes: 2 for emoji presentation
/// and East Asian Wide or Fullwidth, 0 for a lone combining mark or format character, else 1.
/// Marks and joiners inside a cluster add nothing: the cluster is as wide as its base.
func displayWidth(_ character: Character) -> Int {
    let scalars = character.unicodeScalars
    guard let first = scalars.first else { return 0 }
    let properties = first.properties
    if properties.isEmojiPresentation { return 2 }
    if properties.isEmoji && scalars.contains("\u{FE0F}") { return 2 } // text emoji asked to show as emoji
    switch properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format, .control: return 0
    default: return isEastAsianWide(first.value) ? 2 : 1
    }
}

/// East Asian Width W or F (Unicode's EastAsianWidth.txt), the blocks that matter: Hangul,
/// CJK ideographs, kana, CJK symbols and punctuation, Yi, fullwidth forms. Emoji are found by
/// their Emoji_Presentation property instead.
private func isEastAsianWide(_ value: UInt32) -> Bool {
    switch value {
    case 0x1100...0x115F, // Hangul Jamo initial consonants
        0x2E80...0x303E, // CJK radicals, Kangxi radicals, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF, // kana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK strokes, enclosed and compatibility
        0x3400...0x4DBF, // CJK extension A
        0x4E00...0x9FFF, // CJK unified ideographs
        0xA000...0xA4CF, // Yi
        0xA960...0xA97F, // Hangul Jamo extended A
        0xAC00...0xD7A3, // Hangul syllables
        0xF900...0xFAFF, // CJK compatibility ideographs
        0xFE10...0xFE19, // vertical forms
        0xFE30...0xFE6F, // CJK compatibility forms, small form variants
        0xFF00...0xFF60, // fullwidth forms
        0xFFE0...0xFFE6, // fullwidth signs
        0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, // Tangut, Khitan, kana supplements
        0x20000...0x2FFFD, 0x30000...0x3FFFD: // CJK extensions B and later
        return true
    default:
        return false
    }
}

extension String {
    func replacingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
