// swift-tools-version: 6.0
// A libFuzzer target for the feed parser and validator. Build and run with Fuzz/run.sh;
// it is a separate package because a fuzzer executable has no main of its own.
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which differs between checkouts.
let storeIdentity = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "Fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(name: "FeedFuzzer", dependencies: [.product(name: "Store", package: storeIdentity)]),
    ],
    swiftLanguageModes: [.v6]
)
