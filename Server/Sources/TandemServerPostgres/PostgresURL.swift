import Foundation
import NIOSSL
public import PostgresNIO
public import TandemServer

/// A PostgreSQL connection URL, `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE`, as
/// `tandem-server --database` and `TANDEM_DATABASE_URL` take it (libpq's form; the user and
/// password percent-encoded). `sslmode` is `disable`, `prefer` (the default: TLS when the
/// server offers it), `require` (TLS, the certificate not checked, as libpq does) or
/// `verify-full` (TLS, the certificate checked against the system's roots and the host name).
///
/// ```swift
/// let url = try PostgresURL("postgres://tandem:secret@db.internal:5432/tandem?sslmode=require")
/// let client = PostgresClient(configuration: url.configuration, backgroundLogger: logger)
/// ```
public struct PostgresURL: Sendable, CustomStringConvertible {
    public var configuration: PostgresClient.Configuration
    /// The same, for one connection outside the pool (the node's `LISTEN` connection).
    public var connectionConfiguration: PostgresConnection.Configuration
    /// The URL without its password, for logs and messages.
    public var description: String

    /// Parses `text`.
    ///
    /// - Throws: ``StorageError/unavailable(_:)`` naming what is wrong (another scheme, no
    ///   user or database, a port out of range, an unknown `sslmode`).
    public init(_ text: String) throws {
        func invalid(_ why: String) -> StorageError {
            .unavailable("the database URL is not usable: \(why); expected postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=disable|prefer|require|verify-full]")
        }
        guard let parts = URLComponents(string: text), let scheme = parts.scheme, ["postgres", "postgresql"].contains(scheme.lowercased()) else {
            throw invalid("it does not start with postgres://")
        }
        guard let host = parts.host, !host.isEmpty else { throw invalid("it names no host") }
        guard let user = parts.user?.removingPercentEncoding, !user.isEmpty else { throw invalid("it names no user") }
        let database = String(parts.path.drop { $0 == "/" }).removingPercentEncoding ?? ""
        guard !database.isEmpty, !database.contains("/") else { throw invalid("it names no database (the path after the port)") }
        let port = parts.port ?? 5432
        guard (1...65_535).contains(port) else { throw invalid("port \(port) is out of range") }
        let mode = parts.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        let tls: PostgresClient.Configuration.TLS
        let connectionTLS: PostgresConnection.Configuration.TLS
        switch mode {
        case "disable": (tls, connectionTLS) = (.disable, .disable)
        case "prefer", "allow": (tls, connectionTLS) = (.prefer(Self.unverified), try .prefer(.init(configuration: Self.unverified)))
        case "require": (tls, connectionTLS) = (.require(Self.unverified), try .require(.init(configuration: Self.unverified)))
        case "verify-ca", "verify-full":
            (tls, connectionTLS) = (.require(.makeClientConfiguration()), try .require(.init(configuration: .makeClientConfiguration())))
        default: throw invalid("sslmode '\(mode)' is not one of disable, prefer, require, verify-full")
        }
        let password = parts.password?.removingPercentEncoding
        configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
        connectionConfiguration = PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: connectionTLS)
        var shown = parts
        if shown.password != nil { shown.password = "***" }
        description = shown.string ?? "postgres://\(host)"
    }

    /// TLS without checking the certificate: libpq's `require` (and `prefer`) encrypt and do
    /// not authenticate the server; `verify-full` does both.
    private static var unverified: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        return configuration
    }
}
