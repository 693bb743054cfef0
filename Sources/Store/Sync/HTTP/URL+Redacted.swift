import Foundation

extension URL {
    /// The URL as it may be shown or stored: without user name or password, and without the
    /// query parameters that sign an object store's URL (`withoutSigningParameters`). HTTP
    /// errors, reports and sync history name URLs this way, and sync keeps its state under it;
    /// requests still send the whole URL.
    var redacted: String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: true) else { return absoluteString }
        var changed = false
        if components.user != nil || components.password != nil {
            components.user = nil
            components.password = nil
            changed = true
        }
        if let items = components.percentEncodedQueryItems {
            let kept = Self.withoutSigningParameters(items)
            if kept.count != items.count {
                // No `?` left behind when the signature was the whole query: the key of a
                // URL signed with one is the key of the same URL unsigned.
                components.percentEncodedQueryItems = kept.isEmpty ? nil : kept
                changed = true
            }
        }
        guard changed else { return absoluteString }
        return components.url?.absoluteString ?? absoluteString
    }

    /// The URL without user name or password but with its whole query: the key versions before
    /// 2026-11-27 kept a source's state under, signature and all (nil when it cannot be taken
    /// apart).
    var withoutUserInfo: String? {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: true) else { return nil }
        components.user = nil
        components.password = nil
        return components.url?.absoluteString
    }

    /// Signed URLs' parameters (AWS S3 SigV4, GCS, by lowercase name): a credential
    /// (`X-Amz-Signature`, `X-Amz-Security-Token`) or values that change with every signing
    /// (`X-Amz-Date`). Each generation of a presigned URL is the same source, so none of them is
    /// part of its key; stored, the signature is a credential (valid until it expires) in the
    /// store's file, its history and every message naming the URL. Only these prefixed names,
    /// which nothing else uses, are dropped wherever they appear.
    private static let signingParameters: Set<String> = [
        "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-expires", "x-amz-signedheaders",
        "x-amz-signature", "x-amz-security-token",
        "x-goog-algorithm", "x-goog-credential", "x-goog-date", "x-goog-expires", "x-goog-signedheaders",
        "x-goog-signature",
    ]

    /// S3's older signatures (SigV2) and CloudFront's, by lowercase name: dropped only beside a
    /// `Signature`, since `expires` or `policy` alone may well select a feed.
    private static let signatureParameters: Set<String> = [
        "signature", "awsaccesskeyid", "expires", "policy", "key-pair-id",
    ]

    /// An Azure shared access signature's parameters, exactly as Azure names them (lowercase):
    /// dropped only beside a `sig`, since short names such as `sp` or `st` may well select a
    /// feed elsewhere.
    private static let azureSASParameters: Set<String> = [
        "sv", "ss", "srt", "sp", "se", "st", "spr", "sig", "sr", "si", "skoid", "sktid", "skt", "ske", "sks", "skv",
        "sdd",
    ]

    /// The query's items without the signing parameters, every other item kept as it was
    /// (spelling, encoding, order): a feed selected by `?region=eu` stays its own source.
    static func withoutSigningParameters(_ items: [URLQueryItem]) -> [URLQueryItem] {
        let names = items.map { $0.name.removingPercentEncoding ?? $0.name }
        let lowercased = Set(names.map { $0.lowercased() })
        let signedV2 = lowercased.contains("signature")
        let signedAzure = names.contains("sig")
        return zip(items, names).filter { item, name in
            let lowercase = name.lowercased()
            if signingParameters.contains(lowercase) { return false }
            if signedV2 && signatureParameters.contains(lowercase) { return false }
            if signedAzure && azureSASParameters.contains(name) { return false }
            return true
        }.map(\.0)
    }
}
