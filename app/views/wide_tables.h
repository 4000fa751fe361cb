#pragma once
// Tables that scroll sideways where the view is narrower than they are (large text, a narrow window), instead of
// cutting their right-hand columns off: the shared tables of view.h inside a child window of exactly their height.
#include <string>
#include <utility>
#include <vector>

namespace dlsys::gui {

void draw_wide_columns_table(const char* id, const std::vector<std::string>& headers,
                             const std::vector<std::vector<std::string>>& rows);
void draw_wide_value_table(const char* id, const std::vector<std::pair<std::string, std::string>>& rows);

}  // namespace dlsys::gui
