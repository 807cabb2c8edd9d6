/// The dashboard's pages as Mustache templates (``DashboardPage``, ``AdminRoutes``): HTML
/// with a little CSS, no script, no build step. `{{value}}` is escaped for HTML.
enum DashboardTemplates {
    static let style = """
        <style>
        body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #1d1d1f; background: #fafafa; }
        h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
        table { border-collapse: collapse; background: #fff; }
        th, td { padding: .35rem .7rem; border-bottom: 1px solid #e3e3e3; text-align: left; vertical-align: top; }
        th { background: #f0f0f3; font-weight: 600; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
        dl { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; } dt { color: #666; }
        .bar { display: flex; justify-content: space-between; align-items: baseline; }
        .note { color: #666; } .error { color: #b00020; }
        form.inline { display: inline; } caption { text-align: left; font-weight: 600; padding: .6rem 0 .3rem; }
        section.activity { margin-top: 1.5rem; } svg.chart { display: block; margin: .5rem 0; background: #fff; }
        code { font-size: 12px; }
        </style>
        """

    static let dashboard = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Tandem server</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        \(style)
        </head><body>
        <div class="bar"><h1>Tandem server</h1>
        <div>{{operatorName}} (operator){{#formToken}}
        <form class="inline" method="post" action="/admin/sign-out"><input type="hidden" name="form" value="{{formToken}}"><button>Sign out</button></form>{{/formToken}}</div></div>
        <dl id="server">
        <dt>Storage</dt><dd>{{storage}}</dd>
        <dt>Node</dt><dd>{{node}}</dd>
        <dt>Up for</dt><dd>{{uptime}}</dd>
        <dt>Requests</dt><dd>{{requests}} (last hour){{{requestsChart}}}</dd>
        <dt>Users</dt><dd>{{userCount}}</dd>
        <dt>Datasets</dt><dd>{{datasetCount}}</dd>
        <dt>Stored</dt><dd>{{storedBytes}}</dd>
        <dt>As of</dt><dd>{{generatedAt}}</dd>
        </dl>
        <h2>Datasets</h2>
        <table id="datasets"><thead><tr><th>Dataset</th><th>Members</th><th>Records</th><th>Log head</th><th>Entries kept</th><th>Compacted through</th><th>Stored</th><th>Schema versions</th><th>Clients</th></tr></thead><tbody>
        {{#datasets}}<tr><td>{{owner}}/{{name}}</td><td>{{members}}</td><td class="n">{{records}}</td><td class="n">{{logHead}}</td><td class="n">{{keptEntries}}</td><td class="n">{{compactedThrough}}</td><td class="n">{{stored}}</td><td>{{schemaVersions}}</td><td class="n">{{clients}}</td></tr>
        {{/datasets}}{{^datasets}}<tr><td colspan="9" class="note">No datasets yet.</td></tr>{{/datasets}}
        </tbody></table>
        {{#moreDatasets}}<p class="note">And {{moreDatasets}} more (the first \(DashboardPage.shownDatasets) are shown).</p>{{/moreDatasets}}
        <h2>Sync activity</h2>
        <p class="note">The \(DashboardPage.shownActivity) datasets most recently synced through this node, and their clients that pushed or pulled in the last \(ClientActivity.clientRetention / 86_400_000) days (kept in memory: a restart starts afresh). A client is one user's id: the same id from another user is another row. Conflicts are pushed values that lost on the server (an older stamp); refused changes are pushes the server refused. Behind: log entries after the client's cursor as of its last pull; pending: its local changes not on the server, as it said on that pull; both what <code>tandem status --server</code> shows on the client.</p>
        {{#activity}}<section class="activity"><h3>{{owner}}/{{name}}</h3>
        {{{chart}}}
        <p>Schema versions clients pushed with: {{clientVersions}}</p>
        <table class="clients"><thead><tr><th>Client</th><th>User</th><th>Last push</th><th>Last pull</th><th>Behind</th><th>Pending</th><th>Schema version</th></tr></thead><tbody>
        {{#clients}}<tr><td><code>{{id}}</code></td><td>{{user}}</td><td>{{lastPush}}</td><td>{{lastPull}}</td><td class="n">{{behind}}</td><td class="n">{{pending}}</td><td class="n">{{schemaVersion}}</td></tr>
        {{/clients}}{{^clients}}<tr><td colspan="7" class="note">No client sent its id (Tandem-Client).</td></tr>{{/clients}}
        </tbody></table>
        {{#moreClients}}<p class="note">And {{moreClients}} more clients (the \(DashboardPage.shownClients) most recently seen are shown).</p>{{/moreClients}}
        <table class="events"><caption>Recent conflicts and refused changes</caption><thead><tr><th>When</th><th>What</th><th>Client</th><th>User</th><th>Details</th></tr></thead><tbody>
        {{#events}}<tr><td>{{at}}</td><td>{{kind}}</td><td><code>{{client}}</code></td><td>{{user}}</td><td>{{text}}</td></tr>
        {{/events}}{{^events}}<tr><td colspan="5" class="note">No conflicts or refused changes recently.</td></tr>{{/events}}
        </tbody></table></section>
        {{/activity}}{{^activity}}<p class="note">No sync traffic through this node since it started.</p>{{/activity}}
        <h2>Users and quotas</h2>
        <table id="users"><thead><tr><th>User</th><th>Role</th><th>Owns</th><th>Shared with</th><th>Live tokens</th><th>Stored</th><th>Limit</th></tr></thead><tbody>
        {{#users}}<tr><td>{{name}}</td><td>{{role}}</td><td class="n">{{datasets}}</td><td class="n">{{shared}}</td><td class="n">{{tokens}}</td><td class="n">{{stored}}</td><td>{{limit}}</td></tr>
        {{/users}}
        </tbody></table>
        </body></html>
        """

    /// The sign-in form, and why the last attempt failed (`message`).
    static let signIn = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Sign in · Tandem server</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        \(style)
        </head><body>
        <h1>Tandem server</h1>
        {{#message}}<p class="error" id="message">{{message}}</p>{{/message}}
        <form method="post" action="/admin/sign-in">
        <p><label>An operator's API token (or a JWT of the app's sign-in)<br><input type="password" name="token" size="60" autocomplete="off" required></label></p>
        <p><button>Sign in</button></p>
        </form>
        <p class="note">Operators are made with <code>tandem-server users add NAME --operator</code>; <code>tandem-server tokens create NAME</code> makes their token.</p>
        </body></html>
        """
}
