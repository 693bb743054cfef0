import Foundation

/// Applies a validated feed to the store inside one write transaction, record by record.
///
/// It runs after the feed was downloaded (after the `await`), and reads every local record
/// inside the transaction, so a local edit committed while the feed was downloading is seen
/// and respected. The rules, per key (see README, "Sync policies"):
///
/// | local | keep-existing | prefer-remote | three-way |
/// |---|---|---|---|
/// | absent | insert | insert | insert (unless deleted locally since the last sync) |
/// | equal to feed | unchanged | unchanged | unchanged |
/// | differs | kept | updated | updated if unchanged locally since last sync, unchanged if only local changed, else kept (conflict) |
/// | tombstone | delete if unchanged since synced | delete | delete if unchanged since synced |
struct Reconciler {
    let db: Database
    let source: String
    let policy: SyncPolicy
    let imageBudget: Int
    let now: Date
    private(set) var report: SyncReport
    /// Feed images without data that the cache does not hold: to download after the commit.
    private(set) var imagesToDownload: [FeedImage] = []
    private var state: SyncStateTable { SyncStateTable(db: db) }

    init(db: Database, source: String, policy: SyncPolicy, imageBudget: Int, now: Date, status: SyncReport.Status) {
        self.db = db
        self.source = source
        self.policy = policy
        self.imageBudget = imageBudget
        self.now = now
        self.report = SyncReport(status: status, source: source, policy: policy)
    }

    mutating func apply(_ feed: Feed, validators: SourceValidators?) throws {
        try state.saveSource(source, validators: validators, syncedAt: now)
        let frameworks = db.frameworks, orders = db.orders, events = db.events
        try reconcile(feed.frameworks, deleted: feed.deleted.frameworks, kind: .framework, key: \.id,
                      find: frameworks.find, insert: frameworks.insert, update: frameworks.update,
                      delete: { _ = try frameworks.delete($0) }, hash: RecordHash.of)
        try reconcile(feed.orders, deleted: feed.deleted.orders, kind: .order, key: \.id,
                      find: orders.find, insert: orders.insert, update: orders.update,
                      delete: { _ = try orders.delete($0) }, hash: RecordHash.of)
        try reconcile(feed.events, deleted: feed.deleted.events, kind: .event, key: \.id,
                      find: events.find, insert: events.insert, update: events.update,
                      delete: { _ = try events.delete($0) }, hash: RecordHash.of)
        try reconcileImages(feed.images, deleted: feed.deleted.images)
    }

    static func hash(image data: Data, contentType: String?) -> UInt64 { RecordHash.of(image: data, contentType: contentType) }

    // MARK: Records

    private mutating func reconcile<Record>(
        _ records: [Record], deleted: [String], kind: RecordKind, key: (Record) -> String,
        find: (String) throws -> Record?, insert: (Record) throws -> Void, update: (Record) throws -> Void,
        delete: (String) throws -> Void, hash: (Record) -> UInt64
    ) throws {
        var counts = report[kind]
        for record in records {
            let id = key(record)
            let remote = hash(record)
            guard let local = try find(id) else {
                // Under three-way, a record received before and deleted locally since stays deleted
                // unless the feed changed it meanwhile (then it is a conflict, kept deleted).
                if policy == .threeWay, let received = try state.receivedHash(source: source, kind: kind, key: id) {
                    if received == remote { counts.unchanged += 1 } else { conflict(kind, id, &counts) }
                    continue
                }
                try insert(record)
                try state.setReceivedHash(remote, source: source, kind: kind, key: id)
                counts.inserted += 1
                continue
            }
            let current = hash(local)
            if current == remote {
                counts.unchanged += 1
                try state.setReceivedHash(remote, source: source, kind: kind, key: id)
                continue
            }
            switch policy {
            case .keepExisting:
                counts.kept += 1
            case .preferRemote:
                try update(record)
                try state.setReceivedHash(remote, source: source, kind: kind, key: id)
                counts.updated += 1
            case .threeWay:
                let received = try state.receivedHash(source: source, kind: kind, key: id)
                if received == current {
                    // Not changed locally since the last sync: take the remote change.
                    try update(record)
                    try state.setReceivedHash(remote, source: source, kind: kind, key: id)
                    counts.updated += 1
                } else if received == remote {
                    // Only the local side changed: nothing new from the feed.
                    counts.unchanged += 1
                } else {
                    conflict(kind, id, &counts)
                }
            }
        }
        for id in deleted {
            guard let local = try find(id) else {
                try state.forget(source: source, kind: kind, key: id)
                continue
            }
            let received = try state.receivedHash(source: source, kind: kind, key: id)
            if policy == .preferRemote || received == hash(local) {
                try delete(id)
                try state.forget(source: source, kind: kind, key: id)
                counts.deleted += 1
            } else {
                counts.kept += 1
            }
        }
        report[kind] = counts
    }

    private mutating func conflict(_ kind: RecordKind, _ id: String, _ counts: inout SyncReport.Counts) {
        counts.kept += 1
        report.conflicts.append(Change(kind: kind, key: id, operation: .update))
    }

    // MARK: Images

    private mutating func reconcileImages(_ images: [FeedImage], deleted: [String]) throws {
        let table = db.images(budget: imageBudget, now: now)
        for image in images {
            let existing = try table.peek(image.url)
            guard let data = image.data else {
                if existing != nil { report.images.alreadyCached += 1 } else { imagesToDownload.append(image) }
                continue
            }
            let remote = Self.hash(image: data, contentType: image.contentType)
            if let existing {
                let current = Self.hash(image: existing.data, contentType: existing.contentType)
                if current == remote || policy != .preferRemote {
                    report.images.alreadyCached += 1
                    continue
                }
            }
            try table.put(image.url, data: data, contentType: image.contentType)
            try state.setReceivedHash(remote, source: source, kind: .image, key: image.url)
            report.images.stored += 1
        }
        for url in deleted {
            guard let existing = try table.peek(url) else {
                try state.forget(source: source, kind: .image, key: url)
                continue
            }
            let current = Self.hash(image: existing.data, contentType: existing.contentType)
            let received = try state.receivedHash(source: source, kind: .image, key: url)
            if policy == .preferRemote || received == current {
                try table.delete(url)
                try state.forget(source: source, kind: .image, key: url)
                report.images.deleted += 1
            }
        }
    }
}
