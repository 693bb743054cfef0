extension Array {
    /// The array itself, or a copy sized to its elements when it holds more than twice their
    /// room (plus a little): a result grown one row at a time, or reserved for more rows than
    /// came (a table that shrank), is not kept at that size by its caller.
    func withoutExcessCapacity() -> [Element] {
        capacity > 2 * count + 16 ? withUnsafeBufferPointer { Array($0) } : self
    }
}
