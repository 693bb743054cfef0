import Foundation

/// What the operating system said of a file error, in its own words ("No space left on
/// device"), rather than Foundation's ("The operation could not be completed. There isn't
/// enough space."), which names no cause a person can search for.
enum SystemErrorText {
    /// `strerror` of the POSIX error under `error`, else its localized description.
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        return nsError.localizedDescription
    }
}
