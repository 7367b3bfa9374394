// `inner`/`outer`: components reach the `inner` one of an enclosing model.
model World
  parameter Real g = 9.81;
end World;

model Ball
  outer World world;
  Real h(start = 10, fixed = true);
  Real v(start = 0, fixed = true);
equation
  der(h) = v;
  der(v) = -world.g;
end Ball;

model Top
  inner World world(g = 1.62);
  Ball ball;
end Top;
