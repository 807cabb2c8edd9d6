// swift-tools-version: 6.1
import PackageDescription

// The sync server, a package of its own so an app that depends on Tandem resolves only what
// the store and the sync engine need. It depends on the repository's root package by path
// (named, so the checkout's directory name does not matter) for the wire types, the conflict
// core, the SQLite binding, the WAL checkpointer and gzip; its tests include those that need
// a client and a server together.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "TandemServer",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "TandemServer", targets: ["TandemServer"]),
        .executable(name: "tandem-server", targets: ["tandem-server"]),
    ],
    dependencies: [
        .package(name: "Tandem", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // NIOLockedValueBox: a pthread lock ThreadSanitizer sees (Synchronization.Mutex's
        // futex on Linux it does not); already in the graph through Hummingbird.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // NIOHTTPTypes: the request parts a channel handler of Hummingbird's pipeline sees.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // SHA-256 for tokens and push keys (already in the graph through Hummingbird's NIO
        // extras); 3.x or 4.x, whichever the rest of the graph resolves.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // The PostgreSQL storage: its connection pool, and TLS to PostgreSQL (NIOSSL, already
        // in postgres-nio's graph) when the URL asks for it.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The app's own sign-in: JWTs verified against its identity provider's JWKS (RS256,
        // ES256, EdDSA through swift-crypto; no signature code of ours).
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // The operator's dashboard: HTML rendered on the server from templates, values escaped.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // statx's birth time of a file (not declared by Swift's Glibc module): tells a SQLite
        // file copied back from a backup from the one it replaced (see StorageEpoch).
        .target(name: "CFileBirth"),
        // Handlers, the storage protocol with SQLite and in-memory twins, the push's steps.
        .target(
            name: "TandemServer",
            dependencies: [
                "CFileBirth",
                .product(name: "TandemConflicts", package: "Tandem"),
                .product(name: "TandemWire", package: "Tandem"),
                .product(name: "TandemSchema", package: "Tandem"),
                .product(name: "TandemGzip", package: "Tandem"),
                .product(name: "TandemSQLite", package: "Tandem"),
                .product(name: "TandemWAL", package: "Tandem"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The shared event loops that time waiting pulls.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ],
            resources: [.copy("Resources/openapi.yaml")],
            swiftSettings: strict),
        // ServerStorage on PostgreSQL (postgres-nio): the only target that talks to it, so the
        // handlers and the push's steps build and test without it.
        .target(
            name: "TandemServerPostgres",
            dependencies: [
                "TandemServer",
                .product(name: "TandemWire", package: "Tandem"),
                .product(name: "TandemSchema", package: "Tandem"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // ConnectionPoolError: what the pool throws when PostgreSQL cannot be reached.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                // The name of the channel of push announcements (a hash of database and schema).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "tandem-server",
            dependencies: [
                "TandemServer",
                "TandemServerPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "TandemServerTests",
            dependencies: [
                "TandemServer",
                "TandemServerPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TandemWire", package: "Tandem"),
                .product(name: "TandemGzip", package: "Tandem"),
                .product(name: "TandemSchemaExtract", package: "Tandem"),
                .product(name: "TandemSchemaTestSupport", package: "Tandem"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "TandemServerTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // Keys made and JWTs signed by the tests of the app's sign-in.
        .target(
            name: "TandemServerTestSupport",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Tests/TandemServerTestSupport",
            swiftSettings: strict),
        // A client and a server together: the store and the engine against a real
        // tandem-server process, or the server's router in the same process; the `tandem` CLI
        // they run is the root package's (built there first).
        .testTarget(
            name: "TandemSyncServerTests",
            dependencies: [
                "TandemServer",
                "TandemServerPostgres",
                .product(name: "Tandem", package: "Tandem"),
                .product(name: "TandemSync", package: "Tandem"),
                .product(name: "TandemCurl", package: "Tandem"),
                .product(name: "TandemURLSession", package: "Tandem"),
                .product(name: "TandemGzip", package: "Tandem"),
                .product(name: "TandemSchema", package: "Tandem"),
                .product(name: "TandemWire", package: "Tandem"),
                .product(name: "TandemSyncTestSupport", package: "Tandem"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "TandemServerTestSupport",
            ],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
