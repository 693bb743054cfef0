// swift-tools-version: 6.0
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder (wt-kinds, main, a CI checkout's name):
// the product is looked up under that name, whatever the folder is called.
let storePackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL.lastPathComponent

// An app beside the project that adds a fifth record kind, Reminder, outside the library.
let package = Package(
    name: "Reminders",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: "../..")
    ],
    targets: [
        // The kind and its migration, as an app would keep them.
        .target(
            name: "Reminders", dependencies: [.product(name: "Store", package: storePackage)],
            resources: [.copy("Migrations")]
        ),
        // `reminders DB FEED`: syncs FEED into DB and prints every reminder, one JSON object a line.
        .executableTarget(name: "reminders", dependencies: ["Reminders", .product(name: "Store", package: storePackage)]),
    ],
    swiftLanguageModes: [.v6]
)
