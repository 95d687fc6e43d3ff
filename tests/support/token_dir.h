// token_dir.h -- a private directory of token files for a test (modes as
// asked: the programs refuse files others may read), removed at the end.
#ifndef NUMRPC_TESTS_TOKEN_DIR_H
#define NUMRPC_TESTS_TOKEN_DIR_H

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

// Files written with the mode asked (0600 unless told).
class TokenDir {
  public:
    TokenDir()
    {
        char tmpl[] = "/tmp/numrpc-tokens-test-XXXXXX";
        if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
        dir_ = tmpl;
    }
    ~TokenDir()
    {
        for (const std::string &f : files_) unlink(f.c_str());
        rmdir(dir_.c_str());
    }
    // Writes a file of the given mode; its path.
    std::string Write(const std::string &name, const std::string &text, mode_t mode = 0600)
    {
        std::string path = dir_ + "/" + name;
        std::ofstream(path) << text;
        chmod(path.c_str(), mode);
        files_.push_back(path);
        return path;
    }
    const std::string &dir() const { return dir_; }

  private:
    std::string dir_;
    std::vector<std::string> files_;
};

#endif
