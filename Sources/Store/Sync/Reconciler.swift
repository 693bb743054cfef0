import Foundation

/// Applies a feed to the store inside one write transaction, record by record, as
/// `FeedValidator` reads them (it is the validator's `FeedSink`).
///
/// It runs after the feed was downloaded (after the `await`), and reads every local record
/// inside the transaction, so a local edit committed while the feed was downloading is seen
/// and respected. The validator hands it records only while the feed has no problem, and the
/// caller rolls the transaction back when validation fails in the end: the store never keeps
/// part of an invalid feed. The rules, per key (see README, "Sync policies"):
///
/// | local | keep-existing | prefer-remote | three-way |
/// |---|---|---|---|
/// | absent | insert | insert | insert (unless deleted locally since the last sync) |
/// | equal to feed | unchanged | unchanged | unchanged |
/// | differs | kept | updated | updated if unchanged locally since last sync, unchanged if only local changed, else kept (conflict) |
/// | tombstone | delete if unchanged since synced | delete | delete if unchanged since synced |
struct Reconciler: FeedSink {
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

    /// Records the source and its validators; call once, before the first record.
    func begin(validators: SourceValidators?) throws {
        try state.saveSource(source, validators: validators, syncedAt: now)
    }

    mutating func receive(_ framework: Framework) throws { try reconcile(framework, in: db.frameworks) }
    mutating func receive(_ order: Order) throws { try reconcile(order, in: db.orders) }
    mutating func receive(_ event: Event) throws { try reconcile(event, in: db.events) }
    mutating func receive(_ image: FeedImage) throws { try reconcile(image) }

    mutating func receiveTombstone(_ key: String, kind: RecordKind) throws {
        switch kind {
        case .framework: try tombstone(key, in: db.frameworks)
        case .order: try tombstone(key, in: db.orders)
        case .event: try tombstone(key, in: db.events)
        case .image: try tombstoneImage(key)
        }
    }

    static func hash(image data: Data, contentType: String?) -> UInt64 { RecordHash.of(image: data, contentType: contentType) }

    // MARK: Records

    private mutating func reconcile<Table: SyncedTable>(_ record: Table.Record, in table: Table) throws {
        let kind = Table.kind
        let id = Table.key(of: record)
        let remote = Table.hash(of: record)
        let found: Table.Record?
        if policy == .threeWay {
            found = try table.find(id)
        } else if try table.insertIfAbsent(record) {
            // The common case of a first sync: one statement, no lookup before it.
            try state.setReceivedHash(remote, source: source, kind: kind, key: id)
            report[kind].inserted += 1
            return
        } else {
            found = try table.find(id)
        }
        guard let local = found else {
            // Under three-way, a record received before and deleted locally since stays deleted
            // unless the feed changed it meanwhile (then it is a conflict, kept deleted).
            if policy == .threeWay, let received = try state.receivedHash(source: source, kind: kind, key: id) {
                if received == remote { report[kind].unchanged += 1 } else { conflict(kind, id) }
                return
            }
            try table.insert(record)
            try state.setReceivedHash(remote, source: source, kind: kind, key: id)
            report[kind].inserted += 1
            return
        }
        let current = Table.hash(of: local)
        if current == remote {
            report[kind].unchanged += 1
            try state.setReceivedHash(remote, source: source, kind: kind, key: id)
            return
        }
        switch policy {
        case .keepExisting:
            report[kind].kept += 1
        case .preferRemote:
            try table.update(record)
            try state.setReceivedHash(remote, source: source, kind: kind, key: id)
            report[kind].updated += 1
        case .threeWay:
            let received = try state.receivedHash(source: source, kind: kind, key: id)
            if received == current {
                // Not changed locally since the last sync: take the remote change.
                try table.update(record)
                try state.setReceivedHash(remote, source: source, kind: kind, key: id)
                report[kind].updated += 1
            } else if received == remote {
                // Only the local side changed: nothing new from the feed.
                report[kind].unchanged += 1
            } else {
                conflict(kind, id)
            }
        }
    }

    private mutating func tombstone<Table: SyncedTable>(_ id: String, in table: Table) throws {
        let kind = Table.kind
        guard let local = try table.find(id) else {
            try state.forget(source: source, kind: kind, key: id)
            return
        }
        let received = try state.receivedHash(source: source, kind: kind, key: id)
        if policy == .preferRemote || received == Table.hash(of: local) {
            _ = try table.delete(id)
            try state.forget(source: source, kind: kind, key: id)
            report[kind].deleted += 1
        } else {
            report[kind].kept += 1
        }
    }

    private mutating func conflict(_ kind: RecordKind, _ id: String) {
        report[kind].kept += 1
        report.conflicts.append(Change(kind: kind, key: id, operation: .update))
    }

    // MARK: Images

    private mutating func reconcile(_ image: FeedImage) throws {
        let table = db.images(budget: imageBudget, now: now)
        let existing = try table.peek(image.url)
        guard let data = image.data else {
            if existing != nil { report.images.alreadyCached += 1 } else { imagesToDownload.append(image) }
            return
        }
        let remote = Self.hash(image: data, contentType: image.contentType)
        if let existing {
            let current = Self.hash(image: existing.data, contentType: existing.contentType)
            if current == remote || policy != .preferRemote {
                report.images.alreadyCached += 1
                return
            }
        }
        try table.put(image.url, data: data, contentType: image.contentType)
        try state.setReceivedHash(remote, source: source, kind: .image, key: image.url)
        report.images.stored += 1
    }

    private mutating func tombstoneImage(_ url: String) throws {
        let table = db.images(budget: imageBudget, now: now)
        guard let existing = try table.peek(url) else {
            try state.forget(source: source, kind: .image, key: url)
            return
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
