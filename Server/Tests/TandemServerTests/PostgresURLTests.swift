import Testing
import TandemServer
import TandemServerPostgres

/// `--database` URLs: what they connect to, and a clear refusal of what cannot be used.
struct PostgresURLTests {
    @Test func aURLNamesHostPortUserPasswordAndDatabaseAndHidesThePassword() throws {
        let url = try PostgresURL("postgres://tandem:s%40cret@db.internal:6543/sync?sslmode=require")
        #expect(url.configuration.host == "db.internal")
        #expect(url.configuration.port == 6543)
        #expect(url.configuration.username == "tandem")
        #expect(url.configuration.password == "s@cret")
        #expect(url.configuration.database == "sync")
        #expect(!url.description.contains("cret") && url.description.contains("db.internal"))
    }

    @Test func thePortDefaultsTo5432AndPostgresqlIsTheSameScheme() throws {
        #expect(try PostgresURL("postgresql://me@localhost/db").configuration.port == 5432)
    }

    @Test(arguments: [
        ("mysql://me@localhost/db", "postgres://"), ("postgres://localhost/db", "no user"), ("postgres://me@localhost", "no database"),
        ("postgres://me@localhost/db?sslmode=maybe", "sslmode 'maybe'"), ("postgres://me@localhost:0/db", "port 0"),
    ])
    func anUnusableURLIsRefusedWithWhatToFix(_ text: String, _ message: String) {
        #expect {
            try PostgresURL(text)
        } throws: { error in
            "\(error)".contains(message) && "\(error)".contains("expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
    }
}
