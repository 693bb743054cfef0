import Foundation

/// A feed of `count` frameworks with ids `f0`, `f1`, ... whose descriptions hold
/// `descriptionBytes` bytes each: a feed of a chosen size, for tests about disk space.
func frameworksFeed(count: Int, descriptionBytes: Int) -> Data {
    let description = String(repeating: "x", count: descriptionBytes)
    let records = (0..<count).map {
        #"{"id": "f\#($0)", "name": "F", "imageName": "f", "urlString": "https://f", "description": "\#(description)"}"#
    }
    return Data(#"{"version": 1, "frameworks": [\#(records.joined(separator: ", "))]}"#.utf8)
}
