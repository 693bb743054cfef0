// swift-tools-version: 6.0
// A libFuzzer target for the feed parser and validator. Build and run with Fuzz/run.sh;
// it is a separate package because a fuzzer executable has no main of its own.
import Foundation
import PackageDescription

// libFuzzer without its own main (SwiftPM gives every executable its own entry point): the
// harness calls LLVMFuzzerRunDriver. The archive ships with the Swift toolchain.
let toolchainLib = URL(fileURLWithPath: CommandLine.arguments.first ?? "/opt/swift/usr/bin/swift")
    .resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("lib/clang")
let fuzzerArchive =
    ((try? FileManager.default.contentsOfDirectory(atPath: toolchainLib.path)) ?? [])
    .map { toolchainLib.appendingPathComponent("\($0)/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a").path }
    .first { FileManager.default.fileExists(atPath: $0) }
    ?? "/opt/swift/usr/lib/clang/21/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a"

// A path dependency's identity is its folder's name, which differs between checkouts.
let storeIdentity = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "Fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        // The libFuzzer flags are set on this target only: passed with -Xswiftc they would also
        // reach the build tool that embeds the migrations, which has no fuzz entry point.
        .executableTarget(
            name: "FeedFuzzer",
            dependencies: [.product(name: "Store", package: storeIdentity)],
            swiftSettings: [.unsafeFlags(["-sanitize=fuzzer"])],
            linkerSettings: [.unsafeFlags(["-Xlinker", fuzzerArchive, "-lstdc++"])]
        )
    ],
    swiftLanguageModes: [.v6]
)
