import Foundation
import Testing

/// The harness itself: a hung process is killed at its time limit, and no run may reach a
/// store outside the test's temporary directory.
@Suite("storectl test harness")
struct HelperTests {
    @Test("a run past its time limit is killed and reported as timed out")
    func timeout() async throws {
        let storectl = try Storectl()
        let started = ContinuousClock.now
        // The shell's child (sleep) holds stdout: the run ends only if the whole process group
        // is killed. Unkilled it would take 1200 s; the bound leaves a loaded machine minutes (a
        // full suite at load 67 took 138 s for this test).
        let result = try await storectl.run(
            ["-c", "sleep 1200; echo late", try Storectl.executableURL().path], shell: true, timeout: 0.5)
        #expect(result.timedOut)
        #expect(result.status == 128 + SIGKILL)
        #expect(result.stdout.isEmpty)
        #expect(ContinuousClock.now - started < .seconds(400))
    }

    @Test("runs are confined to the temporary directory")
    func isolation() async throws {
        let storectl = try Storectl()
        #expect(storectl.environment()["STORECTL_DB"] == storectl.db)
        #expect(storectl.environment()["HOME"] == storectl.home)
        #expect(storectl.environment()["XDG_DATA_HOME"] == storectl.dataHome)
        await #expect(throws: StorectlError.self) {
            try await storectl.run(["frameworks", "list"], environment: ["STORECTL_DB": "/tmp/elsewhere.sqlite"])
        }
        await #expect(throws: StorectlError.self) {
            try await storectl.run(["frameworks", "list"], environment: ["HOME": NSHomeDirectory(), "STORECTL_DB": nil])
        }
    }
}
