import Foundation
import Store

/// Writing to standard output and standard error.
enum Output {
    static func print(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Pretty JSON, the feed's shapes, one document on stdout.
    static func printJSON(_ value: JSONValue) {
        print(JSONWriter(pretty: true).string(value))
    }

    static func writeRaw(_ data: Data) {
        FileHandle.standardOutput.write(data)
    }
}
