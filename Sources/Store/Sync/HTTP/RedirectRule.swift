import Foundation

/// Which redirects the transport follows, kept apart from URLSession so the rules can be unit
/// tested without a TLS server (the tests cannot easily stand up an https origin on 127.0.0.1).
enum RedirectRule {
    /// Why the redirect from `from` to `to` must not be followed, or nil when it may be.
    ///
    /// - Only http and https targets, with a host, are followed (never file:, ftp:, data:, ...).
    /// - Never from https down to http: the rest of the exchange (and the bearer token) would
    ///   travel in clear text.
    static func refusal(from: URL, to: URL) -> String? {
        let target = to.scheme?.lowercased()
        guard target == "http" || target == "https" else {
            return "only http and https redirects are followed"
        }
        guard let host = to.host, !host.isEmpty else {
            return "the redirect target has no host"
        }
        if from.scheme?.lowercased() == "https" && target == "http" {
            return "a redirect from https to http is never followed"
        }
        return nil
    }

    /// Throws `HTTPError.redirectRefused` when `refusal(from:to:)` gives a reason.
    static func check(from: URL, to: URL) throws(HTTPError) {
        if let reason = refusal(from: from, to: to) {
            throw HTTPError.redirectRefused(from: from, to: to, reason: reason)
        }
    }

    /// Whether two URLs share scheme, host and port. Credentials (Authorization, Cookie) are
    /// only forwarded along a redirect that stays within one origin.
    static func isSameOrigin(_ a: URL, _ b: URL) -> Bool {
        guard let schemeA = a.scheme?.lowercased(), let schemeB = b.scheme?.lowercased(),
            schemeA == schemeB,
            let hostA = a.host?.lowercased(), let hostB = b.host?.lowercased(), hostA == hostB
        else { return false }
        return effectivePort(a, scheme: schemeA) == effectivePort(b, scheme: schemeB)
    }

    private static func effectivePort(_ url: URL, scheme: String) -> Int? {
        if let port = url.port { return port }
        switch scheme {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }
}
