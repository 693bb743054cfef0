/// How sync settles a record that exists both locally and in the feed.
public enum SyncPolicy: String, Sendable, CaseIterable, Codable {
    /// A record that exists locally is kept as it is; a new key is inserted (the default).
    case keepExisting = "keep-existing"
    /// The feed's version replaces the local one.
    case preferRemote = "prefer-remote"
    /// A remote change applies only to a record not changed locally since the last sync from
    /// that source; a record changed on both sides is kept and reported as a conflict.
    case threeWay = "three-way"
}
