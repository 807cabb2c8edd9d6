/// Where and how a ``ModelContainer`` stores its data.
///
/// ```swift
/// let onDisk = ModelConfiguration(url: URL(filePath: "todos.store"), dataset: "todos")
/// let memory = ModelConfiguration(isStoredInMemoryOnly: true)
/// ```
public struct ModelConfiguration: Sendable, Hashable {
    /// The store file, or `nil` in memory.
    public var url: URL?
    /// Whether the store lives in memory only (gone when the container is released).
    public var isStoredInMemoryOnly: Bool
    /// The dataset name used in record URIs (`tandem://<dataset>/…`) and by sync.
    ///
    /// Written into a new store file; an existing file keeps the dataset it was created with,
    /// and opening it with a different explicit dataset is an error.
    public var dataset: String?
    /// How long a write waits for another connection's lock before throwing
    /// ``StoreError/Code/busy``.
    public var busyTimeout: TimeInterval = 5
    /// The wall clock of the change journal (timestamps and HLC stamps).
    public var clock: WallClock = .system
    /// How often a ``ModelContainer/historyTransactions(after:)`` sequence looks for
    /// transactions committed by other processes (its own container's commits too).
    public var historyPollInterval: Duration = .milliseconds(100)
    /// The most memory, in bytes, the writing connection's SQLite page cache may use
    /// (allocated as pages are touched, not up front); reading connections keep SQLite's
    /// default of 2 MiB.
    ///
    /// Every write also writes its journal entry, so a large save touches about twice the
    /// pages of the data alone; with SQLite's default cache those pages spill to the WAL
    /// before the commit and are written twice. 32 MiB holds a 100 000-object save.
    /// Lower it on memory-constrained devices:
    ///
    /// ```swift
    /// var configuration = ModelConfiguration(url: url)
    /// configuration.writerCacheSize = 4 << 20
    /// ```
    public var writerCacheSize: Int = 32 << 20

    /// A store in the file at `url`.
    public init(url: URL, dataset: String? = nil) {
        self.url = url
        self.isStoredInMemoryOnly = false
        self.dataset = dataset
    }

    /// A store in memory (`true`), or in `default.store` in the current directory (`false`).
    public init(isStoredInMemoryOnly: Bool = false, dataset: String? = nil) {
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.url = isStoredInMemoryOnly ? nil : URL(filePath: FileManager.default.currentDirectoryPath).appending(path: "default.store")
        self.dataset = dataset
    }

    public static func == (lhs: ModelConfiguration, rhs: ModelConfiguration) -> Bool {
        lhs.url == rhs.url && lhs.isStoredInMemoryOnly == rhs.isStoredInMemoryOnly && lhs.dataset == rhs.dataset
            && lhs.busyTimeout == rhs.busyTimeout && lhs.historyPollInterval == rhs.historyPollInterval
            && lhs.writerCacheSize == rhs.writerCacheSize
    }

    /// Hashes the store's identity (the clock is not part of it).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(isStoredInMemoryOnly)
        hasher.combine(dataset)
    }

    /// The dataset of a new store when none is given.
    public static let defaultDataset = "default"
}
