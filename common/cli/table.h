// Aligned text tables for the tools' default output.
#ifndef LITE_COMMON_CLI_TABLE_H_
#define LITE_COMMON_CLI_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

namespace lite::cli {

// Left-aligned columns separated by two spaces, a header row first, no
// trailing blanks. Rows shorter than the header are padded with "".
class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  void AddRow(std::vector<std::string> cells);
  std::string Render() const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace lite::cli

#endif  // LITE_COMMON_CLI_TABLE_H_
