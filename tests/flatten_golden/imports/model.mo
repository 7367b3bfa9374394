// The four forms of `import` and `within`-free package lookup.
package Lib
  package Sub
    model A
      parameter Real k = 1;
      Real x(start = 1, fixed = true);
    equation
      der(x) = -k*x;
    end A;
    model B
      extends A(k = 2);
    end B;
  end Sub;
end Lib;

model Top
  import Lib.Sub.A;
  import S = Lib.Sub;
  import Lib.Sub.*;
  import Lib.Sub.{B};
  A a1;
  S.A a2(k = 3);
  B b;
end Top;
