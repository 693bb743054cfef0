/// Shares one fetch among concurrent syncs of the same source in one process: the first sync
/// starts it, the others await the same flight and get the same pages. A cancelled sync stops
/// waiting at once; the fetch is cancelled when every sync waiting for it was.
actor FetchCoalescer {
    typealias Result = FetchedFeed

    private var inFlight: [String: SharedFlight<Result>] = [:]
    /// Fetches started (for tests: two concurrent syncs of one source make one).
    private(set) var fetchCount = 0

    func load(_ key: String, _ work: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let flight: SharedFlight<Result>
        if let shared = inFlight[key], shared.join() {
            flight = shared
        } else {
            fetchCount += 1
            flight = SharedFlight(work)
            inFlight[key] = flight
        }
        defer { if inFlight[key] === flight, flight.isSettled { inFlight[key] = nil } }
        return try await flight.value()
    }
}
