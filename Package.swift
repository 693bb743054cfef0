// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Store",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "Store", targets: ["Store"]),
        .executable(name: "storectl", targets: ["storectl"]),
        // For this repository's tests, benchmarks and harnesses only (the one process runner,
        // temporary folders, lock boxes); neither Store nor storectl depends on it.
        .library(name: "StoreTestSupport", targets: ["StoreTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Test support only: spawns processes without Foundation's Process, whose run() can
        // crash on Linux up to Swift 6.3.1 (swift-corelibs-foundation #5472).
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        // Documentation only: `swift package generate-documentation --target Store` builds the
        // DocC catalog in Sources/Store/Store.docc; nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // libsqlite3 through its C API; nothing public in Store mentions a C type.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Turns Migrations/*.sql into Swift source at build time, so the migrations travel
        // inside the library (no Bundle.module lookup at run time, which fails next to an
        // installed Linux binary).
        .executableTarget(name: "MigrationEmbedder"),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["MigrationEmbedder"]
        ),
        .target(
            name: "Store",
            dependencies: ["CSQLite"],
            plugins: ["EmbedMigrations"]
        ),
        .executableTarget(
            name: "storectl",
            dependencies: [
                "Store",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "StoreTestSupport",
            dependencies: [.product(name: "Subprocess", package: "swift-subprocess")],
            path: "Tests/Support"
        ),
        // Test-only: a SQLite VFS that simulates power loss (drops, or tears, the writes not yet
        // synced). Only StoreTests links it; Store never does.
        .target(name: "PowerLossVFS", dependencies: ["CSQLite"], path: "Tests/PowerLossVFS"),
        .testTarget(name: "StoreTests", dependencies: ["Store", "StoreTestSupport", "PowerLossVFS"]),
        // Sync against a real HTTP server on 127.0.0.1 (Tests/SyncTests/Server/feed_server.py).
        .testTarget(name: "SyncTests", dependencies: ["Store", "StoreTestSupport"], exclude: ["Server"]),
        // End-to-end: runs the built storectl binary; the dependency makes SwiftPM build it
        // next to the test bundle, where the tests look for it.
        .testTarget(name: "StorectlTests", dependencies: ["storectl", "Store", "StoreTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
