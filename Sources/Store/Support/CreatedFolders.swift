import Foundation

/// The folders a command created for its output (the folder and its missing parents), so that
/// it can remove them again if it fails: a failed export or publish leaves no folder behind.
package struct CreatedFolders: Sendable {
    /// The folders created, deepest first; empty if the folder was there already.
    package let folders: [String]

    /// Creates the folder `path` and its missing parents, noting which were missing. A folder
    /// that cannot be created throws, after removing the parents created for it.
    package static func create(_ path: String) throws -> CreatedFolders {
        // The path as given, never resolved by hand: `..` and links mean what the kernel says.
        var missing: [String] = []
        var folder = path
        var info = stat()
        while !missing.contains(folder), lstat(folder, &info) != 0, errno == ENOENT {
            missing.append(folder)
            folder = PathName.folder(of: folder)
        }
        let created = CreatedFolders(folders: missing)
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            created.removeIfEmpty()
            throw error
        }
        return created
    }

    /// These folders, then those of `earlier` not among them: what two creations made, deepest
    /// first (a later creation's folders lie under or beside the earlier's remaining ones).
    package func adding(_ earlier: CreatedFolders) -> CreatedFolders {
        CreatedFolders(folders: folders + earlier.folders.filter { !folders.contains($0) })
    }

    /// Removes the folders created, deepest first, each only if it is empty (`rmdir`): the
    /// command's temporary files are gone by then, and anything another program put there
    /// meanwhile stays, with the folders holding it.
    package func removeIfEmpty() {
        for folder in folders {
            // One that is not empty (or not there) ends it: the folders above hold it.
            guard rmdir(folder) == 0 else { return }
        }
    }
}
