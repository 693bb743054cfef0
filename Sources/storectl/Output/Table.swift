/// A plain-text table: a header row, a rule, and left-aligned columns sized to their widest cell.
/// Cells are escaped (`Output.escaped`).
struct Table {
    var headers: [String]
    var rows: [[String]] = []
    /// Columns to align right (numbers, money).
    var rightAligned: Set<Int> = []
    /// Longest a cell may be before it is cut with an ellipsis.
    var maximumCellWidth = 48

    init(_ headers: String..., rightAligned: Set<Int> = []) {
        self.headers = headers
        self.rightAligned = rightAligned
    }

    mutating func append(_ row: String...) { rows.append(row) }

    func render() -> TerminalText {
        let cells = ([headers] + rows).map { $0.map(clip) }
        var widths = Array(repeating: 0, count: headers.count)
        for row in cells {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ row: [String]) -> String {
            row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                return rightAligned.contains(index) ? padding + cell : cell + padding
            }.joined(separator: "  ").replacingTrailingSpaces()
        }
        var lines = [line(cells[0]), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
        lines += cells.dropFirst().map(line)
        // Every cell is escaped: one line per row, whatever newlines a value holds.
        return TerminalText(lines: lines)
    }

    private func clip(_ text: String) -> String {
        let escaped = Output.escaped(text)
        return escaped.count > maximumCellWidth ? String(escaped.prefix(maximumCellWidth - 1)) + "…" : escaped
    }
}

extension String {
    func replacingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
