/// A small line chart of counts per minute, as inline SVG for the operator's dashboard:
/// drawn on the server from numbers alone (no script, nothing for the page's CSP to allow).
///
/// ```swift
/// let chart = ActivityChart(title: "Pushes and pulls, last hour", series: [
///     .init(name: "pushes", color: "#0a7", values: minutes.map(\.pushes)),
///     .init(name: "pulls", color: "#36c", values: minutes.map(\.pulls)),
/// ])
/// html += chart.svg
/// ```
struct ActivityChart {
    struct Series {
        var name: String
        /// A CSS colour (`#0a7`).
        var color: String
        /// Oldest first, one per minute.
        var values: [Int]
    }

    var title: String
    var series: [Series]
    static let width = 360
    static let height = 96
    /// Room for the labels under the plot.
    static let plotHeight = 72

    /// The chart: one polyline per series over a baseline, the peak written top left, the
    /// series' names and totals in the legend below; `<title>` says it all for screen readers.
    var svg: String {
        let peak = max(series.flatMap(\.values).max() ?? 0, 1)
        let count = max(series.map(\.values.count).max() ?? 0, 2)
        let step = Double(Self.width - 2) / Double(count - 1)
        func y(_ value: Int) -> Int { Self.plotHeight - 2 - Int((Double(value) / Double(peak) * Double(Self.plotHeight - 14)).rounded()) }
        let totals = series.map { "\($0.values.reduce(0, +)) \($0.name)" }.joined(separator: ", ")
        var svg = """
            <svg class="chart" xmlns="http://www.w3.org/2000/svg" width="\(Self.width)" height="\(Self.height)" \
            viewBox="0 0 \(Self.width) \(Self.height)" role="img"><title>\(Self.escape(title)): \(Self.escape(totals))</title>\
            <line x1="0" y1="\(Self.plotHeight - 1)" x2="\(Self.width)" y2="\(Self.plotHeight - 1)" stroke="#ccc"/>\
            <text x="2" y="10" font-size="10" fill="#666">\(peak) / min</text>
            """
        for line in series {
            let points = line.values.enumerated().map { index, value in "\(Int((Double(index) * step).rounded()) + 1),\(y(value))" }
            svg += #"<polyline fill="none" stroke-width="1.5" stroke="\#(Self.escape(line.color))" points="\#(points.joined(separator: " "))"/>"#
        }
        var x = 2
        for line in series {
            let label = "\(line.values.reduce(0, +)) \(line.name)"
            svg += #"<rect x="\#(x)" y="\#(Self.height - 12)" width="10" height="3" fill="\#(Self.escape(line.color))"/>"#
            svg += ##"<text x="\##(x + 14)" y="\##(Self.height - 8)" font-size="10" fill="#333">\##(Self.escape(label))</text>"##
            x += 24 + label.count * 6
        }
        svg += ##"<text x="\##(Self.width - 2)" y="\##(Self.height - 8)" font-size="10" fill="#666" text-anchor="end">last hour</text></svg>"##
        return svg
    }

    /// `text` for an SVG element or attribute.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
