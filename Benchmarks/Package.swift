// swift-tools-version: 6.1
// The benchmark: the Store against raw SQLite, GRDB and the sqlite3 CLI, in the same run.
// A separate package so the main package never depends on GRDB.
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which differs between checkouts.
let storeIdentity = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                .product(name: "Store", package: storeIdentity),
                // The one process runner the tests use too.
                .product(name: "StoreTestSupport", package: storeIdentity),
                .product(name: "GRDB", package: "GRDB.swift"),
                // GRDB's system library target over libsqlite3: the raw C API baseline.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
