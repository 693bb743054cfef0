import Foundation
import Testing

@testable import Store

/// Spool files and folders and publish generations are named by `RandomIdentifier`: Foundation's
/// `UUID()` on Linux returned `00000000-0000-4000-8000-000000000000` every time once the
/// process was out of file descriptors (it reads /dev/urandom).
@Suite("Random identifiers")
struct RandomIdentifierTests {
    @Test("identifiers differ from each other and are version-4, RFC 9562 variant UUIDs")
    func randomVersion4() {
        let identifiers = (0..<1000).map { _ in RandomIdentifier.uuid() }
        #expect(Set(identifiers).count == identifiers.count)
        for identifier in identifiers {
            let bytes = identifier.uuid
            #expect(bytes.6 >> 4 == 4, "not version 4: \(identifier)")
            #expect(bytes.8 >> 6 == 0b10, "not the RFC 9562 variant: \(identifier)")
        }
        let text = RandomIdentifier.uuidString()
        #expect(UUID(uuidString: text) != nil && text == text.uppercased() && text.count == 36, "\(text)")
    }

    #if os(Linux)
        /// In a forked child (so that no other test of this process runs short of descriptors),
        /// with its soft RLIMIT_NOFILE lowered to 0: no open() can succeed there, as when a
        /// process runs out. The child does nothing but make the identifiers and write them to a
        /// pipe opened before the fork; it never touches a lock another thread could hold.
        @Test("two identifiers made with no file descriptor left still differ")
        func randomWithoutDescriptors() throws {
            // Warm up in the parent, so the child needs nothing the runtime has not set up yet.
            _ = RandomIdentifier.uuid()
            var ends: [Int32] = [0, 0]
            try #require(pipe(&ends) == 0)
            let child = fork()
            try #require(child >= 0)
            if child == 0 {
                close(ends[0])
                var limit = rlimit()
                getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
                limit.rlim_cur = 0
                // 1: the limit could not be lowered; 2: a descriptor could still be opened.
                guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { _exit(1) }
                guard open("/dev/null", O_RDONLY) < 0, errno == EMFILE else { _exit(2) }
                var pair = (RandomIdentifier.uuid().uuid, RandomIdentifier.uuid().uuid)
                let written = withUnsafeBytes(of: &pair) { write(ends[1], $0.baseAddress, $0.count) }
                _exit(written == 32 ? 0 : 3)
            }
            close(ends[1])
            defer { close(ends[0]) }
            // A child that never answers is killed; two minutes is a hang, not slowness.
            var entry = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            var ready: Int32 = -1
            repeat { ready = poll(&entry, 1, 120_000) } while ready < 0 && errno == EINTR
            if ready == 0 { kill(child, SIGKILL) }
            var bytes = [UInt8](repeating: 0, count: 32)
            var received = 0
            while received < 32 {
                let count = bytes.withUnsafeMutableBytes { read(ends[0], $0.baseAddress! + received, 32 - received) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                received += count
            }
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0, errno == EINTR {}
            #expect(ready > 0, "the child did not answer in two minutes")
            #expect(status == 0, "the child failed: wait status \(status) (exit 1: setrlimit, 2: open still worked)")
            try #require(received == 32)
            let first = Array(bytes[0..<16]), second = Array(bytes[16..<32])
            #expect(first != second, "the same identifier twice: \(first)")
            #expect(first[6] >> 4 == 4 && second[6] >> 4 == 4)
            #expect(first != [0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0])
        }
    #endif
}
