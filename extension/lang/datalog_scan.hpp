// The Datalog scanner, shared by the parser and the program builder
// (datalog_parse.cpp).
#pragma once

#include <string_view>
#include <vector>

#include "lang/lexer.hpp"
#include "lang/program.hpp"

namespace mln::lang::datalog::detail {

// Tokens of a Datalog text whose first character is at `start` (the whole
// program's text: {1, 1}; a directive placed in another language's program:
// where it was written), so that every error names its real line and column.
// The last token is Tok::End.  Throws LangError(Syntax).
std::vector<lang::detail::Token> scan(std::string_view s, SourcePos start = {1, 1});

}  // namespace mln::lang::datalog::detail
