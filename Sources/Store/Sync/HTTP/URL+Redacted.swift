import Foundation

extension URL {
    /// The URL as it may be shown or stored: without user name or password. HTTP errors name
    /// URLs this way, and sync keeps its state under it.
    var redacted: String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: true),
            components.user != nil || components.password != nil
        else { return absoluteString }
        components.user = nil
        components.password = nil
        return components.url?.absoluteString ?? absoluteString
    }
}
