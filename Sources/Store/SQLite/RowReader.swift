/// What a record's decoder reads from a row: a statement's current row, or a row copied into a
/// `RowChunk`. The decoders of the record tables are generic over it, so that one decoder
/// reads both, the same way.
protocol RowReader {
    func text(_ index: Int32) -> String
    func optionalText(_ index: Int32) -> String?
    func value(_ index: Int32) -> SQLValue
}

extension Statement: RowReader {}
