extension Store {
    /// This library's version: what `storectl --version` prints and every HTTP request's
    /// User-Agent carries.
    public static let version = "0.1.0"

    /// The User-Agent of every HTTP request the store makes (feeds and images), unless the
    /// request sets its own.
    public static let userAgent = "Store/\(version)"
}
