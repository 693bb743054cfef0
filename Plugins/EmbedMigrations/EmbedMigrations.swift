import Foundation
import PackagePlugin

/// Embeds the top-level `Migrations/*.sql` files into the target as generated Swift source.
///
/// `Migrations/` stays the single source of truth: every build regenerates
/// `EmbeddedMigrations.swift` from it, and a changed, added or removed file triggers a rebuild.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "Migrations")
        let files = try FileManager.default
            .contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) migrations from Migrations/",
                executable: try context.tool(named: "MigrationEmbedder").url,
                arguments: [directory.path(percentEncoded: false), output.path(percentEncoded: false)],
                inputFiles: [directory] + files,
                outputFiles: [output]
            )
        ]
    }
}
