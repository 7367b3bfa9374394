package P
  model M
    Real x
  equation
    der(x) = -x;
  end M;
end P;
