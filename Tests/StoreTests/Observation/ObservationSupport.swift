import Foundation
import Testing

@testable import Store

// Helpers for the observation suites: events and feed files. The stream probe is in the shared
// test support (Tests/Support/StreamProbe.swift).

enum ObservationFixtures {
    static func event(_ id: String, on date: String, title: String? = nil) -> Event {
        Event(id: id, title: title ?? "Event \(id)", date: Fixtures.date(date))
    }

    /// Writes a version-1 feed holding `events` (and `frameworks`, and tombstones of events) to
    /// `name` in `directory`.
    static func writeFeed(
        events: [Event], frameworks: [Framework] = [], deletedEvents: [String] = [],
        to name: String, in directory: TemporaryDirectory
    ) throws -> URL {
        let url = directory.url.appendingPathComponent(name)
        var feed: [String: Any] = ["version": 1]
        feed["events"] = events.map { event -> [String: Any] in
            var object: [String: Any] = ["id": event.id, "title": event.title, "date": event.date.description]
            if let notes = event.notes { object["notes"] = notes }
            return object
        }
        feed["frameworks"] = frameworks.map { framework -> [String: Any] in
            [
                "id": framework.id, "name": framework.name, "imageName": framework.imageName,
                "urlString": framework.urlString, "description": framework.description,
            ]
        }
        if !deletedEvents.isEmpty { feed["deleted"] = ["events": deletedEvents] }
        let data = try JSONSerialization.data(withJSONObject: feed, options: [.sortedKeys])
        try data.write(to: url)
        return url
    }
}
