/// What a command needs of the store's file, when --db or STORECTL_DB names it (the default
/// location is the user's own store, created on first use by any command).
enum StoreAccess {
    /// The file must exist: a missing one is refused (`the store PATH does not exist`, exit 1)
    /// and nothing is created; an empty one too (it would become a store: a read changes
    /// nothing). For commands that read, and for those that change or remove
    /// records that must already be there (update, delete, prune, watch, the dry runs): on a
    /// mistyped path they could only fail, or watch a file nothing writes to.
    case existing
    /// As `existing`, but an empty file is read as the new store it is, every migration
    /// pending, and left empty (migrate status, migrate --dry-run; they apply none).
    case inspecting
    /// The file is created (mode 0600) if missing: for commands that add (sync, add, images put,
    /// migrate). If the command then fails, the file it created is removed again, so a failed
    /// first sync leaves no empty store behind. (Removed only once the store is closed, only if
    /// this command created it and the path still names that file, and only while no other
    /// connection has it open and nothing but the migrations is in it: see
    /// `Store.removeUntouched(at:created:)`.)
    case creating
}
