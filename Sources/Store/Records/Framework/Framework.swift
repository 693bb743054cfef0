/// A framework of the Apple framework list, as in the feed.
public struct Framework: Sendable, Codable, Equatable, Hashable, Identifiable {
    public var id: String
    /// The display name: `ARKit`.
    public var name: String
    /// The name of its image.
    public var imageName: String
    /// Its documentation page, as written in the feed.
    public var urlString: String
    /// A sentence about it.
    public var description: String

    /// A framework with every field.
    public init(id: String, name: String, imageName: String, urlString: String, description: String) {
        self.id = id
        self.name = name
        self.imageName = imageName
        self.urlString = urlString
        self.description = description
    }
}
