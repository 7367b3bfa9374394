within Modelica.Mechanics;
package Rotational "One-dimensional rotational mechanical components"
end Rotational;
