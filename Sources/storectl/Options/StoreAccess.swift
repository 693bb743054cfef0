/// What a command needs of the store's file, when --db or STORECTL_DB names it (the default
/// location is the user's own store, created on first use by any command).
enum StoreAccess {
    /// The file must exist: a missing one is refused (`the store PATH does not exist`, exit 1)
    /// and nothing is created. For commands that read, and for those that change or remove
    /// records that must already be there (update, delete, prune, watch, the dry runs): on a
    /// mistyped path they could only fail, or watch a file nothing writes to.
    case existing
    /// The file is created (mode 0600) if missing: for commands that add (sync, add, images put,
    /// migrate). If the command then fails, the file it created is removed again, so a failed
    /// first sync leaves no empty store behind. (Removed only once the store is closed, and
    /// only if it did not exist before the command opened it; another process that opened the
    /// same brand-new file in between would lose it: storectl has no way to know, short of
    /// SQLite's locks, which it does not touch.)
    case creating
}
