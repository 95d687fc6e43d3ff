// raw_rfile.h -- a test client that speaks the protocol itself (message layer) for
// a CALL with an rfile, and answers the server's FILE_READs well, badly or not at all.
#ifndef NUMRPC_TESTS_SDPA_RAW_RFILE_H
#define NUMRPC_TESTS_SDPA_RAW_RFILE_H

#include <stdint.h>

#include <string>

// How the FILE_READ that reaches the end of the file is answered (the
// others get the bytes asked for).
enum class FileAnswer {
    kGood,         // the bytes asked for
    kClientError,  // status NUMRPC_EIO: the client cannot read its file
    kWrongCallId,  // the bytes, under another call's id
    kShort,        // 8 bytes fewer than asked, announced so
    kOversized,    // 8 bytes more than asked, announced so
    kTruncated,    // the full count announced, half the bytes, message ended
    kNever,        // no answer: the client reads on until the end or its deadline
};

const char *FileAnswerName(FileAnswer a);

// When a PROBE (a ping) goes out on the call's connection.
enum class Probe {
    kNone,
    kWithAnswer,  // in the same write as that answer: pipelined behind it
    kAfterReply,  // once the call's REPLY arrived: the connection goes on
};

struct RawOutcome {
    bool closed = false;          // the server ended the connection (EOF or reset)
    bool timed_out = false;       // neither an answer nor the end within the deadline
    int status = -1;              // the CALL's REPLY status; -1: no reply came
    std::string detail;           // the reply's detail
    bool probe_answered = false;  // the PROBE got its reply
    int file_reads = 0;           // FILE_READs the server sent
    std::string end;              // why reading stopped early ("" when all arrived)
};

// Calls routine on 127.0.0.1:port with argv laid out as the client library
// lays it out (an rfile's slot holds its path).  The answer to the FILE_READ
// that reaches the end of the file is `answer`; the probe goes as `probe`
// says.  Then reads until the REPLY (and the probe's reply, if one was sent)
// arrived, the connection ended, or 20 s passed.  An OK reply's scalars are
// read into argv.
RawOutcome RawRfileCall(int port, const char *routine, void **argv, FileAnswer answer, Probe probe);

// The server's counters of routine (STATUS, on a connection of its own):
// framed bytes of its calls' requests and replies.  False on failure.
bool RoutineBytes(int port, const char *routine, uint64_t *bytes_in, uint64_t *bytes_out);

#endif
