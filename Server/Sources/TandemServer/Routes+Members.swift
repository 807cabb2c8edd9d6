import Foundation
import Hummingbird
import TandemWire

/// A dataset's members: listed by any member, managed by its admins. The owner is an admin
/// who cannot be removed or given another role.
extension Routes {
    /// `GET /v1/datasets/{dataset}/members`.
    func members(_ context: TandemRequestContext) async throws -> Response {
        let dataset = try await dataset(context, needs: .reader)
        return try Self.json(DatasetMembers(owner: dataset.owner.name, members: try await storage.members(dataset: dataset.id)))
    }

    /// `PUT /v1/datasets/{dataset}/members/{user}` with `{"role": "reader"|"writer"|"admin"}`.
    func setMember(_ request: Request, _ context: TandemRequestContext) async throws -> Response {
        let dataset = try await dataset(context, needs: .admin)
        // The body first: a bad one is refused the same whether the user exists or not.
        // The body rules of every request (413, 415, gzip), then its shape.
        let data = try await self.body(request)
        guard let body = try? JSONDecoder().decode(MemberRole.self, from: data) else {
            throw APIError.badRequest("invalid_json", "the body is {\"role\": \"reader\"}, {\"role\": \"writer\"} or {\"role\": \"admin\"}")
        }
        let member = try await memberUser(context, of: dataset)
        let existed = try await storage.role(dataset: dataset.id, user: member.id) != nil
        try await storage.setMember(dataset: dataset.id, user: member.id, role: body.role, now: dependencies.now())
        return try Self.json(DatasetMember(user: member.name, role: body.role), status: existed ? .ok : .created)
    }

    /// `DELETE /v1/datasets/{dataset}/members/{user}`: by an admin, or a member leaving.
    func removeMember(_ context: TandemRequestContext) async throws -> Response {
        let caller = try context.requireUser()
        let target = Routes.pathParameter("user", context)
        let dataset = try await dataset(context, needs: target == caller.name ? .reader : .admin)
        try requireWritableToken(context)
        let member = try await memberUser(context, of: dataset)
        guard try await storage.removeMember(dataset: dataset.id, user: member.id) else {
            throw APIError.notFound("'\(member.name)' is not a member of '\(dataset.reference)'")
        }
        // Pulls waiting on the dataset look again: the removed member's get 403 at once.
        storage.logSignals.notify(dataset: dataset.id)
        return Response(status: .noContent)
    }

    /// The user the path names, who is not the dataset's owner.
    private func memberUser(_ context: TandemRequestContext, of dataset: DatasetAccess) async throws -> ServerUser {
        let name = Routes.pathParameter("user", context)
        guard let user = try await storage.user(named: name) else { throw APIError.notFound("no user '\(name)' on this server") }
        guard user.id != dataset.owner.id else {
            throw APIError(.conflict, "owner_is_admin", "'\(name)' owns '\(dataset.reference)': an admin for good, who cannot be removed or given another role")
        }
        return user
    }
}
