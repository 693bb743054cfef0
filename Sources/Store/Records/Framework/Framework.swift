/// A framework of the Apple framework list, as in the feed.
public struct Framework: Sendable, Codable, Equatable, Hashable, Identifiable {
    public var id: String
    public var name: String
    public var imageName: String
    public var urlString: String
    public var description: String

    public init(id: String, name: String, imageName: String, urlString: String, description: String) {
        self.id = id
        self.name = name
        self.imageName = imageName
        self.urlString = urlString
        self.description = description
    }
}
