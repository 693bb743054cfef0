import Foundation

/// A path's folder and last component, split on plain strings as POSIX `dirname` and
/// `basename` split them.
///
/// Not `NSString.deletingLastPathComponent`: in the swift-corelibs-foundation of Swift 6.3.1 it
/// traps (SIGILL in `String._startOfLastPathComponent`) on a one-character relative path such as
/// `x` or `-`, which made `storectl export --out x` crash.
package enum PathName {
    /// The folder holding `path`: `a/b` gives `a`, `/x` gives `/`, `x` and `x/` give `.`.
    package static func folder(of path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let folder = withoutTrailingSlashes(trimmed[..<slash])
        return folder.isEmpty || folder == "/" ? "/" : String(folder)
    }

    /// The last component of `path`: `a/b` and `a/b/` give `b`, `x` gives `x`, `/` gives `/`.
    package static func lastComponent(of path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        guard trimmed != "/", let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// The absolute path of what `path` names, symbolic links and `..` resolved by the system
    /// (`realpath`); nil if it does not exist (or cannot be reached).
    package static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// The absolute path of what `path` names, its folder resolved by the system (symbolic links,
    /// `.` and `..`) and its last component as given, so the file itself need not exist (nor is
    /// a link there followed); nil if the folder does not exist, or if the last component is
    /// `.` or `..` (it names no file in that folder).
    package static func resolvedFolder(of path: String) -> String? {
        let name = lastComponent(of: path)
        guard name != ".", name != "..", let folder = resolved(folder(of: path)) else { return nil }
        return folder == "/" ? "/" + name : folder + "/" + name
    }

    /// `path` without its trailing slashes, except a lone `/`.
    private static func withoutTrailingSlashes<S: StringProtocol>(_ path: S) -> Substring {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed
    }
}
