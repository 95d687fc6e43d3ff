// json_mini.h -- a small JSON reader for tests that check what a command
// prints as JSON (numbers, strings, booleans, null, arrays, objects).
#ifndef NUMRPC_TESTS_JSON_MINI_H
#define NUMRPC_TESTS_JSON_MINI_H

#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool b = false;
    double num = 0;
    std::string str;
    std::vector<Json> items;
    std::map<std::string, Json> fields;

    const Json &operator[](const std::string &key) const
    {
        auto it = fields.find(key);
        if (kind != Object || it == fields.end()) throw std::runtime_error("no field " + key);
        return it->second;
    }
    bool has(const std::string &key) const { return kind == Object && fields.count(key) > 0; }

    // Parses text whole; throws std::runtime_error on any mistake.
    static Json Parse(const std::string &text)
    {
        size_t at = 0;
        Json v = Value(text, at);
        Space(text, at);
        if (at != text.size()) throw std::runtime_error("trailing text at " + std::to_string(at));
        return v;
    }

  private:
    static void Space(const std::string &t, size_t &at)
    {
        while (at < t.size() && (t[at] == ' ' || t[at] == '\n' || t[at] == '\t' || t[at] == '\r')) at++;
    }
    static void Expect(const std::string &t, size_t &at, char c)
    {
        Space(t, at);
        if (at >= t.size() || t[at] != c) throw std::runtime_error(std::string("expected ") + c + " at " + std::to_string(at));
        at++;
    }
    static std::string Str(const std::string &t, size_t &at)
    {
        Expect(t, at, '"');
        std::string out;
        while (at < t.size() && t[at] != '"') {
            char c = t[at++];
            if (c == '\\') {
                if (at >= t.size()) break;
                char e = t[at++];
                if (e == 'u') {
                    out += static_cast<char>(std::strtol(t.substr(at, 4).c_str(), nullptr, 16));
                    at += 4;
                } else {
                    out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
                }
            } else {
                out += c;
            }
        }
        if (at >= t.size()) throw std::runtime_error("unterminated string");
        at++;
        return out;
    }
    static Json Value(const std::string &t, size_t &at)
    {
        Space(t, at);
        if (at >= t.size()) throw std::runtime_error("unexpected end");
        Json v;
        char c = t[at];
        if (c == '{') {
            v.kind = Object;
            at++;
            Space(t, at);
            if (t[at] == '}') return at++, v;
            for (;;) {
                std::string key = Str(t, at);
                Expect(t, at, ':');
                v.fields[key] = Value(t, at);
                Space(t, at);
                if (t[at] == ',') {
                    at++;
                    continue;
                }
                Expect(t, at, '}');
                return v;
            }
        }
        if (c == '[') {
            v.kind = Array;
            at++;
            Space(t, at);
            if (t[at] == ']') return at++, v;
            for (;;) {
                v.items.push_back(Value(t, at));
                Space(t, at);
                if (t[at] == ',') {
                    at++;
                    continue;
                }
                Expect(t, at, ']');
                return v;
            }
        }
        if (c == '"') {
            v.kind = String;
            v.str = Str(t, at);
            return v;
        }
        if (t.compare(at, 4, "true") == 0) return at += 4, v.kind = Bool, v.b = true, v;
        if (t.compare(at, 5, "false") == 0) return at += 5, v.kind = Bool, v;
        if (t.compare(at, 4, "null") == 0) return at += 4, v;
        char *end = nullptr;
        v.num = std::strtod(t.c_str() + at, &end);
        if (end == t.c_str() + at) throw std::runtime_error("bad value at " + std::to_string(at));
        v.kind = Number;
        at = static_cast<size_t>(end - t.c_str());
        return v;
    }
};

#endif
