#pragma once
// The one table of lessons, in the order the sidebar shows them.
#include <string>
#include <vector>

#include "lessons/common/lesson.h"

namespace dlsys {

const std::vector<const Lesson*>& all_lessons();
// Throws BadInput naming the known lessons when `id` is not one of them.
const Lesson& find_lesson(const std::string& id);

}  // namespace dlsys
