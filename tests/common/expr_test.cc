// expr_test.cc -- the shape/complexity bytecode: evaluation, overflow and
// error checks, validation of hostile programs, rendering.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include "expr.h"
}

namespace {

struct Program {
    expr_t e{0, nullptr};
    explicit Program(std::vector<int64_t> words)
    {
        for (int64_t w : words) expr_append(&e, w);
    }
    ~Program() { expr_free(&e); }
};

int ArgsFrom(void *ctx, uint32_t index, int64_t *value, err_t *err)
{
    auto *args = static_cast<std::vector<int64_t> *>(ctx);
    if (index >= args->size()) return err_set(err, NUMRPC_EPROTO, "no argument %u", index);
    *value = (*args)[index];
    return 0;
}

int64_t Eval(const Program &p, std::vector<int64_t> args, int *rc = nullptr)
{
    int64_t out = -777;
    err_t err;
    int r = expr_eval_int(&p.e, ArgsFrom, &args, &out, &err);
    if (rc) *rc = r;
    return out;
}

TEST(Expr, ArithmeticOverArguments)
{
    // (lda + 2) * n - n / 3 % 4
    Program p({EXPR_ARG, 0, EXPR_CONST, 2, EXPR_ADD, EXPR_ARG, 1, EXPR_MUL, EXPR_ARG, 1,
               EXPR_CONST, 3, EXPR_DIV, EXPR_CONST, 4, EXPR_MOD, EXPR_SUB});
    EXPECT_EQ(Eval(p, {10, 7}), (10 + 2) * 7 - 7 / 3 % 4);
    Program mm({EXPR_ARG, 0, EXPR_ARG, 1, EXPR_MIN, EXPR_CONST, 1, EXPR_MAX});
    EXPECT_EQ(Eval(mm, {5, 3}), 3);
    EXPECT_EQ(Eval(mm, {-5, 3}), 1);
    Program pw({EXPR_ARG, 0, EXPR_CONST, 3, EXPR_POW, EXPR_NEG});
    EXPECT_EQ(Eval(pw, {11}), -1331);
}

TEST(Expr, OverflowAndDivisionByZeroAreErrors)
{
    int rc;
    Program mul({EXPR_ARG, 0, EXPR_ARG, 0, EXPR_MUL});
    Eval(mul, {INT64_C(1) << 32}, &rc);
    EXPECT_EQ(rc, NUMRPC_EINVAL);
    Program pw({EXPR_ARG, 0, EXPR_CONST, 5, EXPR_POW});
    Eval(pw, {100000}, &rc);
    EXPECT_EQ(rc, NUMRPC_EINVAL);
    Program div({EXPR_CONST, 1, EXPR_ARG, 0, EXPR_DIV});
    Eval(div, {0}, &rc);
    EXPECT_EQ(rc, NUMRPC_EINVAL);
    Program neg({EXPR_ARG, 0, EXPR_NEG});
    Eval(neg, {INT64_MIN}, &rc);
    EXPECT_EQ(rc, NUMRPC_EINVAL);
}

TEST(Expr, RealEvaluationDoesNotOverflow)
{
    Program pw({EXPR_ARG, 0, EXPR_CONST, 3, EXPR_POW, EXPR_CONST, 2, EXPR_MUL, EXPR_CONST, 3, EXPR_DIV});
    std::vector<int64_t> args = {10000000};
    double out = 0;
    err_t err;
    ASSERT_EQ(expr_eval_real(&pw.e, ArgsFrom, &args, &out, &err), 0);
    EXPECT_DOUBLE_EQ(out, 2.0 * 1e21 / 3.0);
}

// Found by tests/fuzz/fuzz_expr: MOD and POW converted doubles beyond 64
// bits back to integers (undefined; INT64_MIN % -1 killed the process).
TEST(Expr, RealModuloAndPowerTakeOperandsBeyond64Bits)
{
    std::vector<int64_t> none;
    double out = -1;
    err_t err;
    Program big_mod({EXPR_CONST, 10, EXPR_CONST, 19, EXPR_POW, EXPR_CONST, 3, EXPR_MOD});
    ASSERT_EQ(expr_eval_real(&big_mod.e, ArgsFrom, &none, &out, &err), 0);
    EXPECT_EQ(out, 1.0); // 10^19 = 3 * 3333333333333333333 + 1
    Program min_mod({EXPR_CONST, INT64_MIN, EXPR_CONST, -1, EXPR_MOD});
    ASSERT_EQ(expr_eval_real(&min_mod.e, ArgsFrom, &none, &out, &err), 0);
    EXPECT_EQ(out, 0.0);
    Program huge_pow({EXPR_CONST, 2, EXPR_CONST, INT64_MAX, EXPR_POW});
    ASSERT_EQ(expr_eval_real(&huge_pow.e, ArgsFrom, &none, &out, &err), 0);
    EXPECT_EQ(out, 18446744073709551616.0); // the exponent is capped at 64
}

TEST(Expr, ValidationRejectsHostilePrograms)
{
    err_t err;
    Program underflow({EXPR_ADD});
    EXPECT_EQ(expr_validate(&underflow.e, 2, &err), NUMRPC_EPROTO);
    Program two_left({EXPR_CONST, 1, EXPR_CONST, 2});
    EXPECT_EQ(expr_validate(&two_left.e, 2, &err), NUMRPC_EPROTO);
    Program bad_arg({EXPR_ARG, 5});
    EXPECT_EQ(expr_validate(&bad_arg.e, 2, &err), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("parameter 5 of 2"), std::string::npos) << err.detail;
    Program bad_op({EXPR_CONST, 1, 99});
    EXPECT_EQ(expr_validate(&bad_op.e, 2, &err), NUMRPC_EPROTO);
    Program cut({EXPR_CONST});
    EXPECT_EQ(expr_validate(&cut.e, 2, &err), NUMRPC_EPROTO);
    std::vector<int64_t> deep;
    for (int i = 0; i < EXPR_MAX_STACK + 1; i++) {
        deep.push_back(EXPR_CONST);
        deep.push_back(1);
    }
    Program too_deep(deep);
    EXPECT_EQ(expr_validate(&too_deep.e, 2, &err), NUMRPC_EPROTO);
    Program good({EXPR_ARG, 1, EXPR_CONST, 2, EXPR_MUL});
    EXPECT_EQ(expr_validate(&good.e, 2, &err), 0);
}

TEST(Expr, RendersInfix)
{
    const char *names[] = {"lda", "n"};
    char buf[128];
    Program p({EXPR_ARG, 0, EXPR_CONST, 1, EXPR_ARG, 1, EXPR_SUB, EXPR_MUL});
    expr_render(&p.e, names, buf, sizeof buf);
    EXPECT_STREQ(buf, "lda*(1-n)");
    Program m({EXPR_ARG, 1, EXPR_CONST, 1, EXPR_MAX});
    expr_render(&m.e, names, buf, sizeof buf);
    EXPECT_STREQ(buf, "max(n,1)");
}

// The comparison, logic and conditional opcodes (added after EXPR_POW) give
// 0 or 1; COND picks its second or third operand; both evaluators agree.
TEST(Expr, ComparisonsAndConditional)
{
    struct Case {
        int64_t op;
        int64_t a, b, want;
    } cases[] = {{EXPR_EQ, 78, 78, 1}, {EXPR_EQ, 78, 84, 0}, {EXPR_NE, 78, 84, 1},
                 {EXPR_NE, 5, 5, 0},   {EXPR_LT, 1, 2, 1},   {EXPR_LT, 2, 2, 0},
                 {EXPR_LE, 2, 2, 1},   {EXPR_GT, 3, 2, 1},   {EXPR_GT, 2, 2, 0},
                 {EXPR_GE, 2, 2, 1},   {EXPR_GE, 1, 2, 0},   {EXPR_AND, 3, 4, 1},
                 {EXPR_AND, 3, 0, 0},  {EXPR_OR, 0, 0, 0},   {EXPR_OR, 0, -2, 1}};
    for (const Case &c : cases) {
        Program p({EXPR_ARG, 0, EXPR_ARG, 1, c.op});
        EXPECT_EQ(Eval(p, {c.a, c.b}), c.want) << "op " << c.op << " " << c.a << " " << c.b;
        std::vector<int64_t> args = {c.a, c.b};
        double out = -1;
        err_t err;
        ASSERT_EQ(expr_eval_real(&p.e, ArgsFrom, &args, &out, &err), 0);
        EXPECT_EQ(out, static_cast<double>(c.want));
    }
    // jobz == 'V' ? n : 0
    Program cond({EXPR_ARG, 0, EXPR_CONST, 'V', EXPR_EQ, EXPR_ARG, 1, EXPR_CONST, 0, EXPR_COND});
    EXPECT_EQ(Eval(cond, {'V', 9}), 9);
    EXPECT_EQ(Eval(cond, {'N', 9}), 0);
    err_t err;
    EXPECT_EQ(expr_validate(&cond.e, 2, &err), 0);
    Program short_cond({EXPR_CONST, 1, EXPR_CONST, 2, EXPR_COND});
    EXPECT_EQ(expr_validate(&short_cond.e, 2, &err), NUMRPC_EPROTO);
    Program past_last({EXPR_CONST, 1, EXPR_CONST, 2, EXPR_LAST_OP + 1});
    EXPECT_EQ(expr_validate(&past_last.e, 2, &err), NUMRPC_EPROTO);
    const char *names[] = {"jobz", "n"};
    char buf[128];
    expr_render(&cond.e, names, buf, sizeof buf);
    EXPECT_STREQ(buf, "((jobz==86)?n:0)");
}

}  // namespace
