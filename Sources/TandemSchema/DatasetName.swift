/// The rule for dataset names (and the user names a shared dataset's `OWNER/NAME` holds):
/// they appear in record URIs and as path segments of the sync server's URLs.
///
/// ```swift
/// DatasetName.isValid("todos")   // true
/// DatasetName.isValid("..")      // false
/// ```
public enum DatasetName {
    /// 1–128 letters, digits, '-', '_' or '.', and not `.` or `..` (a dataset is a path
    /// segment of the server's URLs, which those two would change).
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 128 && name != "." && name != ".."
            && name.utf8.allSatisfy { c in
                (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 95 || c == 46
            }
    }
}
