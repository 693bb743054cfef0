import Store

/// An error storectl prints as one sentence on stderr before exiting non-zero. Its text is
/// `TerminalText`: the values it quotes (a path, an id, a feed's problems) are escaped.
struct CLIError: Error, CustomStringConvertible {
    let text: TerminalText
    var description: String { text.text }
    init(_ text: TerminalText) { self.text = text }
}
