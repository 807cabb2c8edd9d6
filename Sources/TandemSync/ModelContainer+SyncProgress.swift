import Foundation
import GRDB
import Tandem

extension HistoryDescriptor {
    /// This store's own changes (not the sync's) after `token`, and after change
    /// `afterChange` of those.
    static func local(after token: HistoryToken, afterChange: Int64? = nil) -> HistoryDescriptor {
        var descriptor = HistoryDescriptor(after: token)
        descriptor.excludedAuthors = [SyncStore.author]
        descriptor.afterChange = afterChange
        return descriptor
    }
}

extension ModelContainer {
    /// The `sync` history reader's acknowledged token: local changes up to it are pushed.
    ///
    /// - Throws: ``SyncError`` with code `store` when the store cannot be read.
    func syncAcknowledged() throws -> HistoryToken {
        do {
            return try historyReaders().first { $0.name == SyncStore.reader }?.acknowledged ?? .start
        } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }

    /// The local changes not pushed yet, to fetch.
    ///
    /// ```swift
    /// let pending = try container.fetchHistory(container.unpushedHistory())
    /// ```
    ///
    /// - Throws: ``SyncError`` with code `store` when the store cannot be read.
    func unpushedHistory() throws -> HistoryDescriptor {
        let acknowledged = try syncAcknowledged()
        return .local(after: acknowledged, afterChange: try syncPushedChange(acknowledged: acknowledged))
    }

    /// The last change pushed of a transaction not acknowledged yet (0: none), so a push,
    /// a pull's view of unpushed edits and the status all skip what was pushed of a
    /// transaction read in slices.
    ///
    /// ```swift
    /// var pending = HistoryDescriptor(after: acknowledged)
    /// pending.afterChange = try container.syncPushedChange(acknowledged: acknowledged)
    /// ```
    ///
    /// Valid only while the acknowledged token is the one it was saved for, and while its
    /// transaction still holds that change: change ids can be reused once history is
    /// deleted, so an id alone could skip new changes.
    ///
    /// - Throws: ``SyncError`` with code `store` when the store cannot be read.
    func syncPushedChange(acknowledged: HistoryToken) throws -> Int64 {
        do {
            guard let pushed = try read({ db in try db.tableExists(PushedChange.databaseTableName) ? try PushedChange.fetchOne(db) : nil }),
                pushed.acknowledged == acknowledged.rawValue, pushed.token > acknowledged.rawValue
            else { return 0 }
            var probe = HistoryDescriptor(after: HistoryToken(rawValue: pushed.token - 1))
            probe.afterChange = pushed.changeID - 1
            probe.changeLimit = 1
            let found = try fetchHistory(probe).first
            guard found?.token.rawValue == pushed.token, found?.changes.first?.id == pushed.changeID else { return 0 }
            return pushed.changeID
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.store, "the store failed: \(error)")
        }
    }
}
