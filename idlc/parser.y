/* parser.y -- the grammar of the numrpc IDL (the Ninf IDL made precise, plus
 * generic Defines); builds an ast_file, recovering at the next statement. */
%define api.pure full
%define parse.error verbose
%locations
%param {void *scanner}
%parse-param {ast_file *file}

%code requires {
#include <stdio.h>

#include "ast.h"
}

%code provides {
int yylex(YYSTYPE *lval, YYLTYPE *lloc, void *scanner);
/* The scanner's life cycle (lexer.l, flex's reentrant interface). */
int yylex_init_extra(ast_file *file, void **scanner);
void yyset_in(FILE *in, void *scanner);
int yylex_destroy(void *scanner);
void yyerror(YYLTYPE *lloc, void *scanner, ast_file *file, const char *msg);
}

%code {
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What the type rule yields for T and R (numrpc_types are >= 0). */
enum { TYPE_VAR_T = -1, TYPE_VAR_R = -2 };

static ast_loc at(YYLTYPE l)
{
    ast_loc loc = {l.first_line, l.first_column};
    return loc;
}

/* Appends src to *dst (joining with sep); takes ownership of src. */
static void append_text(char **dst, char *src, const char *sep)
{
    if (*dst == NULL) {
        *dst = src;
        return;
    }
    size_t a = strlen(*dst), b = strlen(sep), c = strlen(src);
    char *joined = ast_alloc(a + b + c + 1);
    memcpy(joined, *dst, a);
    memcpy(joined + a, sep, b);
    memcpy(joined + a + b, src, c + 1);
    free(*dst);
    free(src);
    *dst = joined;
}

/* The iface_mode of a mode word ("IN", "mode_out", any case); takes it. */
static int mode_of(char *word)
{
    const char *w = strncasecmp(word, "mode_", 5) == 0 ? word + 5 : word;
    int mode = strcasecmp(w, "IN") == 0      ? IFACE_IN
               : strcasecmp(w, "OUT") == 0   ? IFACE_OUT
               : strcasecmp(w, "INOUT") == 0 ? IFACE_INOUT
                                             : IFACE_WORK;
    free(word);
    return mode;
}

static ast_name *name_node(char *name, YYLTYPE l)
{
    ast_name *n = ast_alloc(sizeof *n);
    n->name = name;
    n->loc = at(l);
    return n;
}

static ast_expr *binary(int op, ast_expr *lhs, ast_expr *rhs, YYLTYPE l)
{
    ast_expr *e = ast_expr_new(AST_BINARY, at(l));
    e->op = op;
    e->lhs = lhs;
    e->rhs = rhs;
    return e;
}

/* The Define that clauses after it belong to, or NULL before the first. */
static ast_define *current(ast_file *f)
{
    ast_define *d = f->defines;
    while (d && d->next) d = d->next;
    return d;
}

/* Attaches a Calls clause (result may be NULL: no "result =") to the
 * current Define, or reports why it cannot; takes ownership of the strings
 * and the argument list. */
static void calls_clause(ast_file *file, YYLTYPE calls_at, char *lang, YYLTYPE lang_at,
                         char *result, YYLTYPE result_at, char *name, YYLTYPE name_at,
                         ast_name *args)
{
    ast_define *d = current(file);
    if (!file->orphan && (d == NULL || d->has_calls)) {
        if (d == NULL) ast_error(file, at(calls_at), "Calls outside a Define");
        else ast_error(file, at(calls_at), "%s: Calls given twice", d->name);
    }
    if (file->orphan || d == NULL || d->has_calls) {
        free(lang);
        free(result);
        free(name);
        ast_name_free(args);
        return;
    }
    d->has_calls = 1;
    d->lang = lang;
    d->lang_loc = at(lang_at);
    d->calls_result = result;
    d->result_loc = at(result_at);
    d->calls_name = name;
    d->calls_loc = at(name_at);
    d->calls_args = args;
}
}

%code {
/* Attaches "Backend NAME [ranks]" to the current Define (ranks -1: not
 * given); the name is checked by sema.c, the count here and there. */
static void backend_clause(ast_file *file, YYLTYPE backend_at, char *name, YYLTYPE name_at,
                           int64_t ranks, YYLTYPE ranks_at)
{
    ast_define *d = current(file);
    if (!file->orphan && d == NULL) ast_error(file, at(backend_at), "Backend outside a Define");
    else if (!file->orphan && d->has_backend)
        ast_error(file, at(backend_at), "%s: Backend given twice (first at line %d)", d->name,
                  d->backend_loc.line);
    if (file->orphan || d == NULL || d->has_backend) {
        free(name);
        return;
    }
    d->has_backend = 1;
    d->backend = name;
    d->backend_loc = at(name_at);
    d->backend_ranks = ranks;
    d->ranks_loc = at(ranks_at);
}

/* Appends a Define (groups: a generic one's name patterns, else NULL); takes
 * ownership of everything it is given. */
static void define_clause(ast_file *file, char *name, YYLTYPE name_at, ast_group *groups,
                          ast_param *params, char *description)
{
    ast_define *d = ast_alloc(sizeof *d);
    file->orphan = 0;
    d->name = name;
    d->loc = at(name_at);
    d->groups = groups;
    d->params = params;
    d->description = description;
    if (file->library) d->library = ast_strdup(file->library);
    if (file->fortran_format) {
        d->fortran_format = ast_strdup(file->fortran_format);
        d->format_loc = file->format_loc;
    }
    *file->tail = d;
    file->tail = &d->next;
}
}

%union {
    int64_t num;
    char *str;
    int code;
    ast_expr *expr;
    ast_param *param;
    ast_dim *dim;
    ast_name *name;
    ast_group *group;
}

%token <str> IDENT "identifier"
%token <str> STRING "string constant"
%token <num> NUMBER "number"
%token <str> MODE "mode"
%token <str> PATTERN "name pattern"
%token MODULE "Module"
%token DEFINE "Define"
%token LIBRARY "Required"
%token FORTRANFORMAT "FortranFormat"
%token CALLS "Calls"
%token CALCORDER "CalcOrder"
%token BACKEND "Backend"
%token <code> TYPE "type"
%token DOUBLE "double"
%token COMPLEX "complex"
%token EQ "=="
%token NE "!="
%token LE "<="
%token GE ">="
%token ANDAND "&&"
%token OROR "||"

%type <str> strings opt_desc name callee
%type <code> type
%type <expr> expr opt_bound bound_expr
%type <param> params param_list param
%type <dim> dims dim
%type <name> opt_names names prefixes opt_only
%type <group> groups group
%type <num> opt_star opt_ranks

%destructor { free($$); } <str>
%destructor { ast_expr_free($$); } <expr>
%destructor { ast_param_free($$); } <param>
%destructor { ast_dim_free($$); } <dim>
%destructor { ast_name_free($$); } <name>
%destructor { ast_group_free($$); } <group>

%right '?'
%left OROR
%left ANDAND
%left EQ NE
%left '<' '>' LE GE
%left '+' '-'
%left '*' '/' '%'
%precedence UMINUS
%right '^'

%%

file:
      %empty
    | file item
    ;

item:
      MODULE IDENT opt_semi {
        if (file->module) {
            ast_error(file, at(@1), "Module given twice (first at line %d)",
                      file->module_loc.line);
            free($2);
        } else {
            file->module = $2;
            file->module_loc = at(@2);
        }
    }
    | LIBRARY strings opt_semi {
        ast_define *d = current(file);
        if (file->orphan) free($2);
        else append_text(d ? &d->library : &file->library, $2, " ");
    }
    | FORTRANFORMAT STRING opt_semi {
        ast_define *d = current(file);
        char **slot = d ? &d->fortran_format : &file->fortran_format;
        if (file->orphan) {
            free($2);
        } else {
            free(*slot);
            *slot = $2;
            if (d) d->format_loc = at(@2);
            else file->format_loc = at(@2);
        }
    }
    | CALCORDER expr opt_semi {
        ast_define *d = current(file);
        if (file->orphan) {
            ast_expr_free($2);
        } else if (d == NULL) {
            ast_error(file, at(@1), "CalcOrder outside a Define");
            ast_expr_free($2);
        } else if (d->complexity) {
            ast_error(file, at(@1), "%s: CalcOrder given twice", d->name);
            ast_expr_free($2);
        } else {
            d->complexity = $2;
        }
    }
    | BACKEND STRING opt_ranks opt_semi {
        backend_clause(file, @1, $2, @2, $3, @3);
    }
    | CALLS STRING callee '(' opt_names ')' opt_semi {
        calls_clause(file, @1, $2, @2, NULL, @3, $3, @3, $5);
    }
    | CALLS STRING name '=' callee '(' opt_names ')' opt_semi {
        calls_clause(file, @1, $2, @2, $3, @3, $5, @5, $7);
    }
    | DEFINE IDENT '(' params ')' opt_desc {
        define_clause(file, $2, @2, NULL, $4, $6);
    }
    | DEFINE groups '(' params ')' opt_desc {
        define_clause(file, ast_strdup($2->pattern), @2, $2, $4, $6);
    }
    | error {
        ast_define *d = current(file);
        if (d) d->damaged = 1;
        file->orphan = 1;
    }
    ;

opt_semi:
      %empty
    | ';'
    ;

/* A generic Define's name patterns: "?syev {s, d} ?heev {c, z}". */
groups:
      group
    | groups group {
        ast_group **g = &$1;
        while (*g) g = &(*g)->next;
        *g = $2;
        $$ = $1;
    }
    ;

group:
      PATTERN '{' prefixes '}' {
        $$ = ast_alloc(sizeof *$$);
        $$->pattern = $1;
        $$->loc = at(@1);
        $$->prefixes = $3;
    }
    ;

prefixes:
      IDENT { $$ = name_node($1, @1); }
    | prefixes ',' IDENT {
        ast_name **p = &$1;
        while (*p) p = &(*p)->next;
        *p = name_node($3, @3);
        $$ = $1;
    }
    ;

/* A routine's name where a mode cannot stand: a mode word is a name there. */
name:
      IDENT
    | MODE
    ;

callee:
      IDENT
    | PATTERN
    ;

strings:
      STRING
    | strings STRING { $$ = $1; append_text(&$$, $2, ""); }
    ;

opt_desc:
      %empty { $$ = NULL; }
    | strings
    ;

params:
      %empty { $$ = NULL; }
    | param_list
    ;

param_list:
      param
    | param_list ',' param {
        ast_param **p = &$1;
        while (*p) p = &(*p)->next;
        *p = $3;
        $$ = $1;
    }
    ;

param:
      opt_only MODE type opt_bound opt_star name dims {
        $$ = ast_alloc(sizeof *$$);
        $$->only = $1;
        $$->only_loc = at(@1);
        $$->mode = mode_of($2);
        if ($3 == TYPE_VAR_T) $$->type_var = 'T';
        else if ($3 == TYPE_VAR_R) $$->type_var = 'R';
        else $$->type = $3;
        $$->type_loc = at(@3);
        $$->bound = $4;
        $$->bound_loc = at(@4);
        $$->by_pointer = $5 != 0;
        $$->star_loc = at(@5);
        $$->name = $6;
        $$->loc = at(@6);
        $$->dims = $7;
    }
    ;

/* "{c, z} WORK R rwork[n]": a parameter of some precisions only. */
opt_only:
      %empty { $$ = NULL; }
    | '{' prefixes '}' { $$ = $2; }
    ;

/* A string's bound, string<80>: a number, a name or a parenthesised
 * expression (a bare '>' would end it). */
opt_bound:
      %empty { $$ = NULL; }
    | '<' bound_expr '>' { $$ = $2; }
    ;

bound_expr:
      NUMBER {
        $$ = ast_expr_new(AST_NUM, at(@1));
        $$->value = $1;
    }
    | name {
        $$ = ast_expr_new(AST_NAME, at(@1));
        $$->name = $1;
    }
    | '(' expr ')' { $$ = $2; }
    ;

/* The type variables T and R of a generic Define are names, not keywords
 * (r and t stay free as parameter names). */
type:
      TYPE
    | DOUBLE { $$ = NUMRPC_T_DOUBLE; }
    | COMPLEX { $$ = NUMRPC_T_SCOMPLEX; }
    | DOUBLE COMPLEX { $$ = NUMRPC_T_DCOMPLEX; }
    | IDENT {
        if (strcmp($1, "T") == 0 || strcmp($1, "R") == 0) {
            $$ = $1[0] == 'T' ? TYPE_VAR_T : TYPE_VAR_R;
        } else {
            ast_error(file, at(@1),
                      "unknown type '%s' (T and R name the types of a generic Define)", $1);
            $$ = NUMRPC_T_DOUBLE;
        }
        free($1);
    }
    ;

/* A Backend's rank count; -1 when absent (a negative one is checked). */
opt_ranks:
      %empty { $$ = -1; }
    | NUMBER
    | '-' NUMBER { $$ = $2 > 0 ? -$2 : 0; }
    ;

opt_star:
      %empty { $$ = 0; }
    | '*' { $$ = 1; }
    ;

dims:
      %empty { $$ = NULL; }
    | dims dim {
        ast_dim **p = &$1;
        while (*p) p = &(*p)->next;
        *p = $2;
        $$ = $1;
    }
    ;

dim:
      '[' expr ']' {
        $$ = ast_alloc(sizeof *$$);
        $$->size = $2;
        $$->loc = at(@1);
    }
    | '[' expr ':' expr ']' {
        $$ = ast_alloc(sizeof *$$);
        $$->size = $2;
        $$->count = $4;
        $$->loc = at(@1);
    }
    | '[' expr ':' expr ':' expr ']' {
        $$ = ast_alloc(sizeof *$$);
        $$->size = $2;
        $$->count = $4;
        $$->stride = $6;
        $$->loc = at(@1);
    }
    ;

opt_names:
      %empty { $$ = NULL; }
    | names
    ;

names:
      name { $$ = name_node($1, @1); }
    | names ',' name {
        ast_name **p = &$1;
        while (*p) p = &(*p)->next;
        *p = name_node($3, @3);
        $$ = $1;
    }
    ;

expr:
      NUMBER {
        $$ = ast_expr_new(AST_NUM, at(@1));
        $$->value = $1;
    }
    | name {
        $$ = ast_expr_new(AST_NAME, at(@1));
        $$->name = $1;
    }
    | COMPLEX { $$ = ast_expr_new(AST_COMPLEX, at(@1)); }
    | IDENT '(' expr ')' {
        $$ = ast_expr_new(AST_CALL, at(@1));
        $$->name = $1;
        $$->lhs = $3;
    }
    | IDENT '(' expr ',' expr ')' {
        $$ = ast_expr_new(AST_CALL, at(@1));
        $$->name = $1;
        $$->lhs = $3;
        $$->rhs = $5;
    }
    | '(' expr ')' { $$ = $2; }
    | '-' expr %prec UMINUS {
        $$ = ast_expr_new(AST_UNARY, at(@1));
        $$->op = EXPR_NEG;
        $$->lhs = $2;
    }
    | expr '+' expr { $$ = binary(EXPR_ADD, $1, $3, @2); }
    | expr '-' expr { $$ = binary(EXPR_SUB, $1, $3, @2); }
    | expr '*' expr { $$ = binary(EXPR_MUL, $1, $3, @2); }
    | expr '/' expr { $$ = binary(EXPR_DIV, $1, $3, @2); }
    | expr '%' expr { $$ = binary(EXPR_MOD, $1, $3, @2); }
    | expr '^' expr { $$ = binary(EXPR_POW, $1, $3, @2); }
    | expr EQ expr { $$ = binary(EXPR_EQ, $1, $3, @2); }
    | expr NE expr { $$ = binary(EXPR_NE, $1, $3, @2); }
    | expr '<' expr { $$ = binary(EXPR_LT, $1, $3, @2); }
    | expr LE expr { $$ = binary(EXPR_LE, $1, $3, @2); }
    | expr '>' expr { $$ = binary(EXPR_GT, $1, $3, @2); }
    | expr GE expr { $$ = binary(EXPR_GE, $1, $3, @2); }
    | expr ANDAND expr { $$ = binary(EXPR_AND, $1, $3, @2); }
    | expr OROR expr { $$ = binary(EXPR_OR, $1, $3, @2); }
    | expr '?' expr ':' expr %prec '?' {
        $$ = ast_expr_new(AST_COND, at(@2));
        $$->cond = $1;
        $$->lhs = $3;
        $$->rhs = $5;
    }
    ;

%%

void yyerror(YYLTYPE *lloc, void *scanner, ast_file *f, const char *msg)
{
    (void)scanner;
    ast_error(f, at(*lloc), "%s", msg);
}

/* The lexer feeds the parser; neither calls back into the other. */
int ast_parse_stream(ast_file *file, FILE *in)
{
    void *scanner;
    if (yylex_init_extra(file, &scanner) != 0) return -1;
    yyset_in(in, scanner);
    /* yyparse starts yylloc at 1:1 for first and last; advance() reads last. */
    int rc = yyparse(scanner, file);
    if (rc == 2) ast_error(file, (ast_loc){0, 0}, "out of parser memory");
    yylex_destroy(scanner);
    return 0;
}

int ast_parse_file(ast_file *file)
{
    FILE *in = fopen(file->path, "r");
    if (in == NULL) return -1;
    int rc = ast_parse_stream(file, in);
    fclose(in);
    return rc;
}
