import Foundation
import Store

/// The stores a command opened, closed by `Storectl.main` once the command is done, whether it
/// succeeded or failed.
///
/// Closing the last connection to a database makes SQLite checkpoint the WAL into the main
/// file and delete the -wal and -shm files (https://sqlite.org/wal.html, "when the last
/// connection to a database closes, that connection does a checkpoint and then deletes the
/// WAL"). Without it every command left them behind, and a copy of the main file alone (cp,
/// a backup tool) missed the latest writes.
actor OpenStores {
    static let shared = OpenStores()

    private var stores: [Store] = []

    func register(_ store: Store) {
        stores.append(store)
    }

    func closeAll() async {
        let open = stores
        stores.removeAll()
        for store in open { await store.close() }
    }
}
